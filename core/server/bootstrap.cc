#include "core/server/bootstrap.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "core/accesslog/registry.h"
#include "core/common/log.h"
#include "core/event/main_thread.h"
#include "core/proxy/stream.h"
#include "core/server/discovery_sink.h"
#include "core/tls/certificate.h"
#include "core/tls/tls_io.h"
#include "core/upstream/health/state.h"

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

std::string limitsKey(const config::Limits& l) {
  return std::to_string(l.max_request_line_bytes) + "," + std::to_string(l.max_header_bytes) + "," +
         std::to_string(l.max_header_count) + "," + std::to_string(l.max_request_body_bytes) + "," +
         std::to_string(l.request_header_timeout_ms) + "," + std::to_string(l.idle_timeout_ms);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + ",";
  return out;
}

// Every TLS setting and the content of every file it names.
std::string tlsKey(const config::TlsServer& t) {
  if (!t.enabled) return "plain";
  std::vector<std::string> files;
  for (const auto& c : t.certificates) {
    files.push_back(c.cert_chain);
    files.push_back(c.private_key);
  }
  if (!t.client_ca.empty()) files.push_back(t.client_ca);
  const auto& h = t.client_cert_headers;
  return "tls|" + std::to_string(t.strict_sni) + t.min_version + "|" + t.ciphers + "|" +
         t.ciphersuites + "|" + join(t.alpn) + "|" + std::to_string(static_cast<int>(t.verify)) +
         "|" + h.subject + "," + h.uri_san + "," + h.dns_san + "," + h.fingerprint + "|" +
         std::to_string(t.handshake_timeout_ms) + "," + std::to_string(t.session_tickets) + "," +
         std::to_string(t.session_ticket_rotation_s) + "," + std::to_string(t.session_cache_size) +
         "," + std::to_string(t.session_timeout_s) + "," + std::to_string(t.refuse_expired) + "|" +
         tls::contentDigest(files);
}

std::string tlsKey(const config::TlsClient& t) {
  if (!t.enabled) return "plain";
  std::vector<std::string> files;
  if (!t.ca_file.empty()) files.push_back(t.ca_file);
  if (!t.client_certificate.cert_chain.empty()) {
    files.push_back(t.client_certificate.cert_chain);
    files.push_back(t.client_certificate.private_key);
  }
  return "tls|" + t.ca_file + "|" + std::to_string(t.verify) + "|" + t.sni + "|" + join(t.alpn) +
         "|" + t.min_version + "|" + tls::contentDigest(files);
}

// Builds a cluster's upstream TLS context, or leaves *out null for plain TCP. False on error.
bool buildClientTls(const config::Cluster& c, const std::string& name,
                    std::shared_ptr<const tls::ClientContext>* out,
                    std::vector<std::string>* errors) {
  if (!c.tls.enabled) return true;
  *out = tls::ClientContext::create(c.tls, name, errors);
  return *out != nullptr;
}

std::string listenerKey(const config::Listener& l, const config::Limits& limits) {
  std::string key = l.name + "|" + l.address + "|" + l.context_path + "|" + limitsKey(limits) +
                    "|" + tlsKey(l.tls) + "|up:" + join(l.upgrades) + "," +
                    std::to_string(l.tunnel_idle_timeout_ms);
  for (const auto& f : l.filters) key += "|" + pluginKey(f);
  for (const auto& a : l.access_logs) {
    key += "|log:" + a.path + "|" + std::to_string(a.buffer_bytes) + "|" + a.format;
  }
  return key;
}

// The listener's access log sinks; a file that cannot be opened is an error naming it.
bool buildAccessLogs(const config::Listener& l, proxy::ListenerInfo* info,
                     std::vector<std::string>* errors) {
  bool ok = true;
  for (const config::AccessLog& a : l.access_logs) {
    std::string error;
    auto file = accesslog::Registry::global().acquire(a.path, &error);
    if (file == nullptr) {
      errors->push_back(a.path_mark.str() + ": listener '" + l.name +
                        "': cannot open access log '" + a.path + "': " + error);
      ok = false;
      continue;
    }
    accesslog::Format format;
    accesslog::Format::parse(a.format, &format, &error);  // checked when the config was read
    info->access_logs.push_back(std::make_shared<const accesslog::Sink>(
        std::move(format), std::move(file), static_cast<size_t>(a.buffer_bytes)));
  }
  return ok;
}

// Everything about a cluster but its name and endpoints.
std::string clusterSettingsKey(const config::Cluster& c) {
  return pluginKey(c.balancer) + "|" + std::to_string(static_cast<int>(c.hash_key.source)) + ":" +
         c.hash_key.name + "|" + std::to_string(c.connect_timeout_ms) + "," +
         std::to_string(c.response_timeout_ms) + "," + std::to_string(c.idle_timeout_ms) + "," +
         std::to_string(c.max_idle_connections) + "," + std::to_string(c.retry_policy.retries) +
         "|" + std::to_string(c.max_requests_per_host) + "," + std::to_string(c.max_queue) + "," +
         std::to_string(c.queue_timeout_ms) + "|" + tlsKey(c.tls) + "|" +
         upstream::health::settingsKey(c) + "|" + config::resilienceSettingsKey(c);
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
    std::vector<std::string> tls_reasons;
    for (int i = 0; l.tls.enabled && i < tls::kHandshakeFailureCount; ++i) {
      tls_reasons.push_back(tls::failureLabel(static_cast<tls::HandshakeFailure>(i)));
    }
    auto listener_stats = std::make_shared<stats::ListenerStats>(l.name, tls_reasons);
    bool ok = true;
    if (l.tls.enabled) {
      std::vector<std::string> warnings;
      info->tls = tls::ServerContext::create(l.tls, l.name, errors, &warnings);
      for (const std::string& w : warnings) SLUICE_LOG(kWarn, w);
      ok = info->tls != nullptr;
      for (size_t i = 0; ok && i < info->tls->certificates().size(); ++i) {
        const tls::CertificateInfo& c = info->tls->certificates()[i];
        stats::Gauge expiry =
            stats::defaultRegistry().gauge(stats::kTlsCertificateExpiry, {l.name, c.file});
        expiry.set(c.not_after);
        listener_stats->cert_expiry.push_back(std::move(expiry));
      }
    }
    info->stats = std::move(listener_stats);
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
    if (!buildAccessLogs(l, info.get(), errors)) ok = false;
    if (!ok) continue;
    std::string key = listenerKey(l, cfg.limits);
    std::shared_ptr<const proxy::ListenerInfo> reuse;
    std::vector<std::string> file_changes;
    for (size_t i = 0; previous != nullptr && i < previous->listeners.size(); ++i) {
      const auto& old = previous->listeners[i];
      if (previous->listener_keys[i] != key || old->filters.size() != info->filters.size()) {
        continue;
      }
      bool same = true;
      for (size_t f = 0; f < info->filters.size(); ++f) {
        same = same && sameLibrary(old->filters[f], info->filters[f]);
      }
      // Same YAML and library, but a file the filter read at config_create has other content
      // now (a keys file, an htpasswd file, a JWKS): the fresh instance replaces it.
      std::vector<std::string> changed;
      for (size_t f = 0; same && f < info->filters.size(); ++f) {
        std::string why = plugin::changedFile(old->filters[f]->files(), info->filters[f]->files());
        if (!why.empty()) {
          changed.push_back("listener '" + l.name + "': filter '" + info->filters[f]->name() +
                            "' rebuilt: " + why);
        }
      }
      if (same && changed.empty()) {
        reuse = old;
      } else if (same) {
        file_changes = std::move(changed);
      }
    }
    if (reuse != nullptr) file_changes.clear();
    for (std::string& c : file_changes) out->file_changes.push_back(std::move(c));
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
        std::string why = plugin::changedFile(old.info->balancer->files(), balancer->files());
        if (why.empty()) {
          built.info = old.info;
        } else {
          out->file_changes.push_back("cluster '" + c.name + "': balancer '" + balancer->name() +
                                      "' rebuilt: " + why);
        }
      }
    }
    if (built.info == nullptr) {
      auto info = std::make_unique<upstream::ClusterInfo>();
      if (!buildClientTls(c, c.name, &info->tls, errors)) continue;
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
    std::shared_ptr<const tls::ClientContext> client_tls;
    if (!buildClientTls(d.cluster_defaults, "(cluster_defaults)", &client_tls, errors)) continue;
    out->discovery.push_back(
        BuiltDiscovery{std::move(disc), {d.cluster_defaults, balancer, client_tls}, key});
  }
}

}  // namespace

std::vector<std::string> tlsFiles(const config::Config& config) {
  std::vector<std::string> files;
  auto add = [&](const std::string& f) {
    if (!f.empty() && std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  };
  for (const auto& l : config.listeners) {
    if (!l.tls.enabled) continue;
    for (const auto& c : l.tls.certificates) {
      add(c.cert_chain);
      add(c.private_key);
    }
    add(l.tls.client_ca);
  }
  auto addClient = [&](const config::TlsClient& t) {
    if (!t.enabled) return;
    add(t.ca_file);
    add(t.client_certificate.cert_chain);
    add(t.client_certificate.private_key);
  };
  for (const auto& c : config.clusters) addClient(c.tls);
  for (const auto& d : config.discovery) addClient(d.cluster_defaults.tls);
  return files;
}

std::string tlsFingerprint(const config::Config& config) {
  std::string all;
  for (const auto& l : config.listeners) all += tlsKey(l.tls) + ";";
  for (const auto& c : config.clusters) all += tlsKey(c.tls) + ";";
  for (const auto& d : config.discovery) all += tlsKey(d.cluster_defaults.tls) + ";";
  return all;
}

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
  buildListeners(*config, loader, previous, out, errors);
  if (out->listeners.size() == config->listeners.size()) {
    out->route_chains = buildRouteChains(
        *config, loader, out->listeners, out->listener_keys,
        previous != nullptr ? previous->route_chains : std::vector<BuiltRouteChain>{}, routes.get(),
        errors, &out->file_changes);
  }
  out->routes = std::move(routes);
  buildClusters(*config, loader, previous, out, errors);
  buildDiscovery(*config, loader, previous, out, errors);
  return errors->size() == before;
}

}  // namespace sluice::server
