// The shared object's entry point: `discovery: [{name: zookeeper, config: {...}}]`.
#include "core/api/sdk/discovery.h"
#include "discovery/zookeeper/config.h"
#include "discovery/zookeeper/discovery.h"

SLUICE_DISCOVERY_PLUGIN("zookeeper", "1.0.0", sluice::zookeeper::ZookeeperConfig,
                        sluice::zookeeper::ZookeeperDiscovery)
