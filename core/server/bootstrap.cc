#include "core/server/bootstrap.h"

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

}  // namespace

std::unique_ptr<plugin::Loader> makeLoader(const config::Config& config) {
  plugin::HostTables tables;
  tables.filter = proxy::filterHostApi();
  tables.balancer = upstream::balancerHostApi();
  tables.discovery = discoveryHostApi();
  return std::make_unique<plugin::Loader>(config.plugin_paths, tables);
}

bool build(std::shared_ptr<const config::Config> config, plugin::Loader& loader, Built* out,
           std::vector<std::string>* errors) {
  out->config = config;
  for (const config::Listener& l : config->listeners) {
    auto info = std::make_shared<proxy::ListenerInfo>();
    info->config = l;
    info->limits = config->limits;
    info->parser_limits = parserLimits(config->limits);
    info->root = config;
    for (const config::PluginRef& ref : l.filters) {
      std::string error;
      auto f = plugin::createFilter(loader, ref, &error);
      if (f == nullptr) {
        errors->push_back(error);
        continue;
      }
      info->filters.push_back(std::move(f));
    }
    out->listeners.push_back(std::move(info));
  }
  for (const config::Cluster& c : config->clusters) {
    std::string error;
    auto balancer = plugin::createBalancer(loader, c.balancer, &error);
    if (balancer == nullptr) {
      errors->push_back(error);
      continue;
    }
    auto info = std::make_shared<upstream::ClusterInfo>();
    info->config = c;
    info->balancer = std::move(balancer);
    std::vector<upstream::HostEntry> entries;
    for (const config::Endpoint& e : c.endpoints) {
      sockaddr_storage ss{};
      socklen_t len = 0;
      if (!upstream::resolveAddress(e.address, &ss, &len, &error)) {
        errors->push_back(e.mark.str() + ": cluster '" + c.name + "': " + error);
        continue;
      }
      upstream::HostEntry entry;
      entry.host = std::make_shared<upstream::Host>(e.address, reinterpret_cast<sockaddr*>(&ss),
                                                    len);
      entry.weight = e.weight;
      entries.push_back(std::move(entry));
    }
    out->clusters.push_back(
        BuiltCluster{info, std::make_shared<upstream::HostSet>(1, std::move(entries))});
  }
  for (const config::Discovery& d : config->discovery) {
    std::string error;
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
    out->discovery.push_back(BuiltDiscovery{std::move(disc), {d.cluster_defaults, balancer}});
  }
  return errors->empty();
}

}  // namespace sluice::server
