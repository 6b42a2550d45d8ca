#include "core/config/validate.h"

#include <map>
#include <string>

namespace sluice::config::internal {
namespace {

// Reports every value after the first that repeats an earlier one. `value(i)` gives the i-th
// value ("" values are skipped: they already have their own error), `marks[i]` its position.
template <typename ValueFn>
void checkUnique(size_t count, ValueFn value, const std::vector<Mark>& marks,
                 std::string_view label, std::string_view what, Context& ctx) {
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < count && i < marks.size(); ++i) {
    const std::string& v = value(i);
    if (v.empty()) continue;
    auto [it, inserted] = first.emplace(v, i);
    if (inserted) continue;
    ctx.error(marks[i], cat(label, "[", i, "]: duplicate ", what, " '", v, "' (first at ",
                            marks[it->second].str(), ")"));
  }
}

}  // namespace

void validate(const Config& config, const Spans& spans, Context& ctx) {
  if (config.listeners.empty()) {
    ctx.error(spans.listeners, "at least one listener is required (listeners: [...])");
  }
  const auto& listeners = config.listeners;
  checkUnique(
      listeners.size(), [&](size_t i) -> const std::string& { return listeners[i].name; },
      spans.listener_name, "listeners", "listener name", ctx);
  checkUnique(
      listeners.size(), [&](size_t i) -> const std::string& { return listeners[i].address; },
      spans.listener_address, "listeners", "listener address", ctx);
  const auto& clusters = config.clusters;
  checkUnique(
      clusters.size(), [&](size_t i) -> const std::string& { return clusters[i].name; },
      spans.cluster_name, "clusters", "cluster name", ctx);
  const auto& routes = config.routes;
  checkUnique(
      routes.size(), [&](size_t i) -> const std::string& { return routes[i].prefix; },
      spans.route_prefix, "routes", "route prefix", ctx);

  if (!config.discovery.empty()) return;  // discovery may create any cluster at run time
  for (size_t i = 0; i < routes.size() && i < spans.route_cluster.size(); ++i) {
    const std::string& name = routes[i].cluster;
    if (name.empty()) continue;
    bool found = false;
    for (const Cluster& cluster : clusters) found = found || cluster.name == name;
    if (!found) {
      ctx.error(spans.route_cluster[i],
                cat("routes[", i, "].cluster: unknown cluster '", name,
                    "' (not in clusters, and no discovery is configured to create it)"));
    }
  }
}

}  // namespace sluice::config::internal
