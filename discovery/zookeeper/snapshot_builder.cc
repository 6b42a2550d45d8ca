#include "discovery/zookeeper/snapshot_builder.h"

#include <algorithm>
#include <utility>

#include "discovery/zookeeper/names.h"

namespace sluice::zookeeper {

SnapshotBuilder::SnapshotBuilder(const Format& format, sdk::Host host, std::string label)
    : format_(format), host_(host), label_(std::move(label)) {}

const LeafResult& SnapshotBuilder::parse(const std::vector<std::string>& names,
                                         const std::string& path, const std::string& data,
                                         std::map<std::string, Cached>* next) {
  auto old = cache_.find(path);
  if (old != cache_.end() && old->second.data == data) {
    return next->emplace(path, std::move(old->second)).first->second.result;
  }
  Cached fresh{data, format_.parseLeaf(names, data)};
  const LeafResult& r = fresh.result;
  if (r.kind == LeafResult::Kind::kMalformed) {
    host_.log(sdk::LogLevel::kWarn, label_ + ": skipping malformed node " + path + ": " + r.reason);
  } else if (r.kind == LeafResult::Kind::kSkipped && !r.quiet) {
    host_.log(sdk::LogLevel::kInfo, label_ + ": skipping " + path + ": " + r.reason);
  } else if (!r.warning.empty()) {
    host_.log(sdk::LogLevel::kWarn, label_ + ": node " + path + ": " + r.warning);
  }
  return next->emplace(path, std::move(fresh)).first->second.result;
}

std::vector<sdk::DiscoveredCluster> SnapshotBuilder::build(const Tree& tree, SnapshotStats* stats) {
  *stats = SnapshotStats();
  malformed_.clear();
  std::map<std::string, std::map<std::string, sdk::Endpoint>> clusters;
  if (format_.branchIsCluster()) {
    tree.forEachBranch([&](const std::string& name) {
      if (isClusterName(name)) {
        clusters[name];
        return;
      }
      ++stats->malformed;
      malformed_[name] = "bad cluster name";
      if (bad_branches_.insert(name).second) {
        host_.log(sdk::LogLevel::kWarn, label_ + ": skipping '" + name +
                                            "': not a valid cluster name (want [A-Za-z0-9._-])");
      }
    });
  }
  std::map<std::string, Cached> next;
  tree.forEachLeaf(
      [&](const std::vector<std::string>& names, const std::string& path, const std::string& data) {
        const LeafResult& r = parse(names, path, data, &next);
        if (r.kind == LeafResult::Kind::kMalformed) {
          ++stats->malformed;
          malformed_[path] = r.reason;
          return;
        }
        if (r.kind == LeafResult::Kind::kSkipped) {
          ++stats->skipped;
          return;
        }
        auto& endpoints = clusters[r.cluster];
        auto [it, added] = endpoints.emplace(r.endpoint.address, r.endpoint);
        if (added) return;
        // The same address twice (one host, many interfaces): the largest weight, and metadata
        // merged key by key (the first value of a key wins, in path order).
        sdk::Endpoint& e = it->second;
        e.weight = std::max(e.weight, r.endpoint.weight);
        if (e.zone.empty()) e.zone = r.endpoint.zone;
        for (const auto& kv : r.endpoint.metadata) {
          bool known = false;
          for (const auto& have : e.metadata) known = known || have.first == kv.first;
          if (!known) e.metadata.push_back(kv);
        }
      });
  cache_.swap(next);
  std::vector<sdk::DiscoveredCluster> out;
  out.reserve(clusters.size());
  for (auto& [name, endpoints] : clusters) {
    sdk::DiscoveredCluster c;
    c.name = name;
    c.endpoints.reserve(endpoints.size());
    for (auto& entry : endpoints) c.endpoints.push_back(std::move(entry.second));
    stats->endpoints += c.endpoints.size();
    out.push_back(std::move(c));
  }
  stats->clusters = out.size();
  return out;
}

}  // namespace sluice::zookeeper
