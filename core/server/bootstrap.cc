#include "core/server/bootstrap.h"

#include <yaml-cpp/yaml.h>

#include "core/event/main_thread.h"
#include "core/proxy/stream.h"
#include "core/server/discovery_sink.h"

namespace sluice::server {
namespace {

http::ParserLimits parserLimits(const config::Limits& l) {
  http::ParserLimits p;
  p.max_target_bytes = l.max_request_line_bytes;
  p.max_header_bytes = l.max_header_bytes;
  p.max_header_count = l.max_header_count;
  p.max_body_bytes = l.max_request_body_bytes;
  return p;
}

// Canonical text of a plugin reference: name, explicit path and its YAML config.
std::string pluginKey(const config::PluginRef& ref) {
  YAML::Emitter out;
  out << YAML::Flow << ref.config;
  return ref.name + "|" + ref.path + "|" + out.c_str();
}

std::string limitsKey(const config::Limits& l) {
  return std::to_string(l.max_request_line_bytes) + "," + std::to_string(l.max_header_bytes) +
         "," + std::to_string(l.max_header_count) + "," +
         std::to_string(l.max_request_body_bytes) + "," +
         std::to_string(l.request_header_timeout_ms) + "," + std::to_string(l.idle_timeout_ms);
}

std::string listenerKey(const config::Listener& l, const config::Limits& limits) {
  std::string key = l.name + "|" + l.address + "|" + l.context_path + "|" + limitsKey(limits);
  for (const auto& f : l.filters) key += "|" + pluginKey(f);
  return key;
}

// Everything about a cluster but its name and endpoints.
std::string clusterSettingsKey(const config::Cluster& c) {
  return pluginKey(c.balancer) + "|" + std::to_string(static_cast<int>(c.hash_key.source)) + ":" +
         c.hash_key.name + "|" + std::to_string(c.connect_timeout_ms) + "," +
         std::to_string(c.response_timeout_ms) + "," + std::to_string(c.idle_timeout_ms) + "," +
         std::to_string(c.max_idle_connections) + "," + std::to_string(c.retries);
}

template <typename T>
bool sameLibrary(const std::shared_ptr<T>& a, const std::shared_ptr<T>& b) {
  return a != nullptr && b != nullptr && &a->library() == &b->library();
}

void buildListeners(const config::Config& cfg, plugin::Loader& loader, const Built* previous,
                    Built* out, std::vector<std::string>* errors) {
  for (const config::Listener& l : cfg.listeners) {
    auto info = std::make_unique<proxy::ListenerInfo>();
    info->config = l;
    info->limits = cfg.limits;
    info->parser_limits = parserLimits(cfg.limits);
    info->stats = std::make_shared<const stats::ListenerStats>(l.name);
    bool ok = true;
    for (const config::PluginRef& ref : l.filters) {
      std::string error;
      auto f = plugin::createFilter(loader, ref, &error);
      if (f == nullptr) {
        errors->push_back(error);
        ok = false;
        continue;
      }
      info->filters.push_back(std::move(f));
    }
    if (!ok) continue;
    std::string key = listenerKey(l, cfg.limits);
    std::shared_ptr<const proxy::ListenerInfo> reuse;
    for (size_t i = 0; previous != nullptr && i < previous->listeners.size(); ++i) {
      const auto& old = previous->listeners[i];
      if (previous->listener_keys[i] != key || old->filters.size() != info->filters.size()) {
        continue;
      }
      bool same = true;
      for (size_t f = 0; f < info->filters.size(); ++f) {
        same = same && sameLibrary(old->filters[f], info->filters[f]);
      }
      if (same) reuse = old;
    }
    out->listeners.push_back(reuse != nullptr ? reuse : event::mainThreadOwned(std::move(info)));
    out->listener_keys.push_back(std::move(key));
  }
}

void buildClusters(const config::Config& cfg, plugin::Loader& loader, const Built* previous,
                   Built* out, std::vector<std::string>* errors) {
  for (const config::Cluster& c : cfg.clusters) {
    std::string error;
    auto balancer = plugin::createBalancer(loader, c.balancer, &error);
    if (balancer == nullptr) {
      errors->push_back(error);
      continue;
    }
    BuiltCluster built;
    for (const config::Endpoint& e : c.endpoints) {
      sockaddr_storage ss{};
      socklen_t len = 0;
      if (!upstream::resolveAddress(e.address, &ss, &len, &error)) {
        errors->push_back(e.mark.str() + ": cluster '" + c.name + "': " + error);
        continue;
      }
      built.endpoints.push_back(EndpointSpec{e.address, e.weight, "", {}});
    }
    built.key = clusterSettingsKey(c);
    for (size_t i = 0; previous != nullptr && i < previous->clusters.size(); ++i) {
      const BuiltCluster& old = previous->clusters[i];
      if (old.info->config.name == c.name && old.key == built.key &&
          sameLibrary(old.info->balancer, balancer)) {
        built.info = old.info;
      }
    }
    if (built.info == nullptr) {
      auto info = std::make_unique<upstream::ClusterInfo>();
      info->config = c;
      info->balancer = std::move(balancer);
      info->stats = std::make_shared<const stats::ClusterStats>(c.name);
      built.info = event::mainThreadOwned(std::move(info));
    }
    out->clusters.push_back(std::move(built));
  }
}

void buildDiscovery(const config::Config& cfg, plugin::Loader& loader, const Built* previous,
                    Built* out, std::vector<std::string>* errors) {
  for (size_t i = 0; i < cfg.discovery.size(); ++i) {
    const config::Discovery& d = cfg.discovery[i];
    std::string error;
    std::string key = pluginKey(d.plugin) + "#" + clusterSettingsKey(d.cluster_defaults);
    if (previous != nullptr && i < previous->discovery.size()) {
      // An unchanged entry (same settings, same plugin files) keeps running as it is, without
      // a new config_create: a discovery source that cannot start right now (its registry or
      // file is down) must not block reloads of unrelated parts.
      const BuiltDiscovery& old = previous->discovery[i];
      auto lib = loader.load(d.plugin, SLUICE_PLUGIN_KIND_DISCOVERY, &error);
      auto blib = loader.load(d.cluster_defaults.balancer, SLUICE_PLUGIN_KIND_BALANCER, &error);
      if (old.key == key && lib != nullptr && blib != nullptr &&
          lib.get() == &old.plugin->library() &&
          blib.get() == &old.cluster_template.balancer->library()) {
        out->discovery.push_back(old);
        continue;
      }
      error.clear();
    }
    auto disc = plugin::createDiscovery(loader, d.plugin, &error);
    if (disc == nullptr) {
      errors->push_back(error);
      continue;
    }
    auto balancer = plugin::createBalancer(loader, d.cluster_defaults.balancer, &error);
    if (balancer == nullptr) {
      errors->push_back(error);
      continue;
    }
    out->discovery.push_back(BuiltDiscovery{std::move(disc), {d.cluster_defaults, balancer}, key});
  }
}

}  // namespace

std::unique_ptr<plugin::Loader> makeLoader(const config::Config& config) {
  plugin::HostTables tables;
  tables.filter = proxy::filterHostApi();
  tables.balancer = upstream::balancerHostApi();
  tables.discovery = discoveryHostApi();
  return std::make_unique<plugin::Loader>(config.plugin_paths, tables);
}

bool build(std::shared_ptr<const config::Config> config, plugin::Loader& loader,
           const Built* previous, Built* out, std::vector<std::string>* errors) {
  size_t before = errors->size();
  out->config = config;
  auto routes = std::make_unique<proxy::RouteTable>();
  routes->config = config;
  out->routes = std::move(routes);
  buildListeners(*config, loader, previous, out, errors);
  buildClusters(*config, loader, previous, out, errors);
  buildDiscovery(*config, loader, previous, out, errors);
  return errors->size() == before;
}

}  // namespace sluice::server
