// Empty-list protection: a ZooKeeper update that would leave a cluster that has endpoints with
// none (its instances all gone, or its node deleted) is held: the cluster keeps its last list,
// and the hold is logged once; when instances come back the hold ends (logged too). With
// protection off, such a cluster is published empty (or not at all) and answers 503.
//
// Why on by default: a registry that empties out is far more often a registry problem (mass
// session expiry after a ZooKeeper outage, a wrong chroot, an operator's rmr) than every backend
// of a service going away at once; stale endpoints fail per request and the proxy retries,
// whereas an empty cluster fails every request. The price: a service really shut down keeps its
// last endpoints in sluice (connection refused → 502/503 after retries) until it registers again
// or sluice restarts. See docs/zookeeper.md.
// Single-threaded (the discovery's loop thread).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/api/sdk/discovery.h"
#include "core/api/sdk/host.h"

namespace sluice::zookeeper {

class EmptyProtection {
 public:
  EmptyProtection(bool enabled, sdk::Host host, std::string label);

  // The snapshot to publish instead of `next`; remembers it as the last published one.
  std::vector<sdk::DiscoveredCluster> apply(std::vector<sdk::DiscoveredCluster> next);
  // Clusters currently held (sorted).
  std::vector<std::string> held() const { return {held_.begin(), held_.end()}; }
  // The last snapshot apply() returned, by cluster.
  const std::map<std::string, std::vector<sdk::Endpoint>>& last() const { return last_; }

 private:
  bool enabled_;
  sdk::Host host_;
  std::string label_;
  std::map<std::string, std::vector<sdk::Endpoint>> last_;
  std::set<std::string> held_;
};

}  // namespace sluice::zookeeper
