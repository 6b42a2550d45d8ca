// Turns a validated config into what the workers run: plugins loaded and their configs
// validated, listener filter chains, clusters with balancers and resolved host sets. Main
// thread. Used by `--validate` (build, report, discard) and by the server at start.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/plugin/plugin.h"
#include "core/proxy/runtime.h"
#include "core/server/cluster_manager.h"
#include "core/upstream/cluster.h"
#include "core/upstream/host.h"

namespace sluice::server {

struct BuiltCluster {
  std::shared_ptr<const upstream::ClusterInfo> info;
  std::shared_ptr<const upstream::HostSet> hosts;
};

// A discovery entry: its plugin config instance, and the template for the clusters it creates.
struct BuiltDiscovery {
  std::shared_ptr<plugin::DiscoveryConfig> plugin;
  ClusterTemplate cluster_template;
};

struct Built {
  std::shared_ptr<const config::Config> config;
  std::vector<std::shared_ptr<const proxy::ListenerInfo>> listeners;
  std::vector<BuiltCluster> clusters;
  std::vector<BuiltDiscovery> discovery;
};

// The plugin loader for `config` (its plugin_paths, then the built-in fallbacks), wired to the
// core's host tables.
std::unique_ptr<plugin::Loader> makeLoader(const config::Config& config);

// Builds everything; on failure returns false with one line per problem in `errors`
// ("file:line:col: ..."). Endpoint host names are resolved here (blocking).
bool build(std::shared_ptr<const config::Config> config, plugin::Loader& loader, Built* out,
           std::vector<std::string>* errors);

}  // namespace sluice::server
