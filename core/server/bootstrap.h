// Turns a validated config into what the workers run: plugins loaded and their configs
// validated, listener filter chains, route table, clusters with balancers, discovery entries.
// Main thread. Used by `--validate` (build, report, discard), at start, and by every reload.
//
// On reload, `previous` lets unchanged parts be reused as the same objects: a listener whose
// settings and filter chain (config, plugin file and the files each filter declared with
// depends_on_file, by content) are unchanged keeps its ListenerInfo, so
// the workers keep their filter instances (and their state); a cluster whose settings and
// balancer are unchanged keeps its ClusterInfo, so the workers keep their balancer instances.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/plugin/plugin.h"
#include "core/proxy/runtime.h"
#include "core/server/cluster_manager.h"
#include "core/server/route_chains.h"
#include "core/upstream/cluster.h"

namespace sluice::server {

using BuiltCluster = ClusterSpec;

// A discovery entry: its plugin config instance, and the template for the clusters it creates.
struct BuiltDiscovery {
  std::shared_ptr<plugin::DiscoveryConfig> plugin;
  ClusterTemplate cluster_template;
  std::string key;
};

struct Built {
  std::shared_ptr<const config::Config> config;
  std::shared_ptr<const proxy::RouteTable> routes;
  std::vector<std::shared_ptr<const proxy::ListenerInfo>> listeners;
  std::vector<std::string> listener_keys;     // parallel to `listeners`
  std::vector<BuiltRouteChain> route_chains;  // what routes->chains holds, with reuse keys
  std::vector<BuiltCluster> clusters;
  std::vector<BuiltDiscovery> discovery;
  // Listener and route chains rebuilt only because a file a filter depends on changed
  // (depends_on_file): "listener 'L': filter 'F' rebuilt: /path changed". For the reload log.
  std::vector<std::string> file_changes;
};

// Every TLS file (certificates, keys, CAs) `config` names, absolute, without duplicates.
std::vector<std::string> tlsFiles(const config::Config& config);
// A digest of every TLS setting and the content of every TLS file of `config`: it changes
// exactly when a reload would build different TLS contexts.
std::string tlsFingerprint(const config::Config& config);

// The plugin loader for `config` (its plugin_paths, then the built-in fallbacks), wired to the
// core's host tables.
std::unique_ptr<plugin::Loader> makeLoader(const config::Config& config);

// Builds everything; on failure returns false with one line per problem in `errors`
// ("file:line:col: ..."). Endpoint host names are resolved here (blocking) to report bad ones.
// `previous` (may be null) is the running build whose unchanged parts are reused.
bool build(std::shared_ptr<const config::Config> config, plugin::Loader& loader,
           const Built* previous, Built* out, std::vector<std::string>* errors);

}  // namespace sluice::server
