// Route filter chains (routes[].filters): for every listener × route with filters, the chain
// that route runs on that listener, composed on the main thread (docs/configuration.md,
// "Filters"):
//   extend  — the listener's entries in order; a route entry naming one of them replaces it in
//             place (its own config instance: the per-route config; `path` and `failure_mode`
//             are the listener entry's unless the route entry gives its own) or, with
//             `disabled: true`, removes it; the route's other entries follow, in order.
//   replace — the route's entries only.
// A route entry gets one config instance (config_create) per route, shared by every listener
// it applies to; the listener's own filters keep theirs (shared with the listener chain).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/plugin/plugin.h"
#include "core/proxy/runtime.h"

namespace sluice::server {

// Canonical text of a plugin reference: name, explicit path and its YAML config (the reload
// reuse keys compare it).
std::string pluginKey(const config::PluginRef& ref);

// A built route chain and what decides whether a reload may keep it.
struct BuiltRouteChain {
  std::string key;                            // route identity, listener key, composed entries
  const proxy::ListenerInfo* base = nullptr;  // the listener info it was composed from
  std::shared_ptr<const proxy::ListenerInfo> info;
};

// Fills routes->chains for `config` from the built `listeners` (parallel to config.listeners,
// with `listener_keys`). A chain whose key, base listener info, plugin files and the files its
// own entries depend on (depends_on_file, by content) are the same as in `previous` (may be
// empty) is that same object, so workers keep its instances; a chain rebuilt only because such
// a file changed is named in `file_changes` (may be null). Returns the chains built (for the
// next reload's `previous`); errors (a route entry's plugin not found or refusing its config)
// are appended as "file:line:col: ..." lines.
std::vector<BuiltRouteChain> buildRouteChains(
    const config::Config& config, plugin::Loader& loader,
    const std::vector<std::shared_ptr<const proxy::ListenerInfo>>& listeners,
    const std::vector<std::string>& listener_keys, const std::vector<BuiltRouteChain>& previous,
    proxy::RouteTable* routes, std::vector<std::string>* errors,
    std::vector<std::string>* file_changes = nullptr);

}  // namespace sluice::server
