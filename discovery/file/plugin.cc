// The shared object's entry point: `discovery: [{name: file, config: {...}}]`.
#include "core/api/sdk/discovery.h"
#include "discovery/file/file_discovery.h"

SLUICE_DISCOVERY_PLUGIN("file", "1.0.0", sluice::discovery::FileDiscoveryConfig,
                        sluice::discovery::FileDiscovery)
