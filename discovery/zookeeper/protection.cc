#include "discovery/zookeeper/protection.h"

#include <algorithm>
#include <utility>

namespace sluice::zookeeper {

EmptyProtection::EmptyProtection(bool enabled, sdk::Host host, std::string label)
    : enabled_(enabled), host_(host), label_(std::move(label)) {}

std::vector<sdk::DiscoveredCluster> EmptyProtection::apply(
    std::vector<sdk::DiscoveredCluster> next) {
  std::set<std::string> still_held;
  if (enabled_) {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < next.size(); ++i) index[next[i].name] = i;
    for (const auto& [name, endpoints] : last_) {
      if (endpoints.empty()) continue;
      auto it = index.find(name);
      if (it != index.end() && !next[it->second].endpoints.empty()) continue;
      still_held.insert(name);
      if (held_.count(name) == 0) {
        host_.log(sdk::LogLevel::kWarn,
                  label_ + ": cluster '" + name + "' would have no endpoints (" +
                      (it == index.end() ? "its node is gone" : "no instance registered") +
                      "); empty_protection keeps its last " + std::to_string(endpoints.size()) +
                      " endpoints");
      }
      if (it == index.end()) {
        next.push_back(sdk::DiscoveredCluster{name, endpoints});
      } else {
        next[it->second].endpoints = endpoints;
      }
    }
    std::sort(next.begin(), next.end(),
              [](const sdk::DiscoveredCluster& a, const sdk::DiscoveredCluster& b) {
                return a.name < b.name;
              });
  }
  for (const std::string& name : held_) {
    if (still_held.count(name) == 0) {
      host_.log(sdk::LogLevel::kInfo,
                label_ + ": cluster '" + name + "' has instances again; hold released");
    }
  }
  held_ = std::move(still_held);
  last_.clear();
  for (const sdk::DiscoveredCluster& c : next) last_[c.name] = c.endpoints;
  return next;
}

}  // namespace sluice::zookeeper
