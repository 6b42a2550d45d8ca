#include "core/config/validate.h"

#include <map>
#include <string>

#include "core/config/address.h"

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

bool isWildcardHost(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

// True when a listener on `a` and one on `b` could not both bind (same port, and the same host
// or either a wildcard). Strings only: host names are not resolved here (the bind at start
// catches those).
bool addressesOverlap(const std::string& a, const std::string& b) {
  std::string host_a, host_b;
  uint16_t port_a = 0, port_b = 0;
  if (!splitHostPort(a, &host_a, &port_a, nullptr) ||
      !splitHostPort(b, &host_b, &port_b, nullptr)) {
    return false;
  }
  return port_a == port_b && (host_a == host_b || isWildcardHost(host_a) || isWildcardHost(host_b));
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
  // Exact duplicates are reported above; a wildcard next to a specific address on the same port
  // could not be bound by this process either (every address is taken exclusively).
  for (size_t i = 0; i < listeners.size() && i < spans.listener_address.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const std::string& a = listeners[i].address;
      const std::string& b = listeners[j].address;
      if (a.empty() || b.empty() || a == b || !addressesOverlap(a, b)) continue;
      ctx.error(spans.listener_address[i],
                cat("listeners[", i, "].address: '", a, "' overlaps listener address '", b,
                    "' (at ", spans.listener_address[j].str(), ")"));
      break;
    }
  }
  for (size_t i = 0;
       !config.admin_address.empty() && i < listeners.size() && i < spans.listener_address.size();
       ++i) {
    if (listeners[i].address.empty() ||
        !addressesOverlap(listeners[i].address, config.admin_address)) {
      continue;
    }
    ctx.error(spans.listener_address[i],
              cat("listeners[", i, "].address: '", listeners[i].address,
                  "' is taken by the admin listener (admin.address '", config.admin_address,
                  "' at ", config.admin_mark.str(), ")"));
  }
  const auto& clusters = config.clusters;
  checkUnique(
      clusters.size(), [&](size_t i) -> const std::string& { return clusters[i].name; },
      spans.cluster_name, "clusters", "cluster name", ctx);
  const auto& routes = config.routes;
  checkUnique(
      routes.size(), [&](size_t i) -> const std::string& { return routes[i].prefix; },
      spans.route_prefix, "routes", "route prefix", ctx);
  checkUnique(
      routes.size(), [&](size_t i) -> const std::string& { return routes[i].name; },
      spans.route_name, "routes", "route name", ctx);
  validateRouteFilters(config, ctx);

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
