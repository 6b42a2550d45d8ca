// Builds the full snapshot {cluster → endpoints} from the mirror (tree.h) with a format
// (format.h). Each instance node is parsed once per distinct content (cached by path), so a
// change costs one parse, not one per node. A malformed node is skipped, counted and logged once
// per content; it never affects other nodes. Endpoints with the same address in one cluster
// (a Dubbo host exporting many interfaces, a Curator instance registered twice) collapse into
// one, with the largest weight and their metadata merged. Clusters and endpoints come out sorted,
// so equal registries give equal snapshots. Single-threaded (the discovery's loop thread).
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/api/sdk/discovery.h"
#include "core/api/sdk/host.h"
#include "discovery/zookeeper/format.h"
#include "discovery/zookeeper/tree.h"

namespace sluice::zookeeper {

struct SnapshotStats {
  size_t clusters = 0;
  size_t endpoints = 0;
  size_t malformed = 0;  // nodes that could not be read (bad URL, JSON, port, name)
  size_t skipped = 0;    // nodes read but not used (disabled, not UP, other protocol, ...)
};

class SnapshotBuilder {
 public:
  // `format` must outlive the builder. `label` prefixes log lines (e.g. "zookeeper /dubbo").
  SnapshotBuilder(const Format& format, sdk::Host host, std::string label);

  std::vector<sdk::DiscoveredCluster> build(const Tree& tree, SnapshotStats* stats);

  // Malformed nodes in the last build (path → reason), for tests and logs.
  const std::map<std::string, std::string>& malformed() const { return malformed_; }

 private:
  struct Cached {
    std::string data;
    LeafResult result;
  };
  const LeafResult& parse(const std::vector<std::string>& names, const std::string& path,
                          const std::string& data, std::map<std::string, Cached>* next);

  const Format& format_;
  sdk::Host host_;
  std::string label_;
  std::map<std::string, Cached> cache_;  // by path, the last build's nodes only
  std::map<std::string, std::string> malformed_;
  std::set<std::string> bad_branches_;  // first-level names already logged as bad
};

}  // namespace sluice::zookeeper
