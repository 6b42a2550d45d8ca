// What the admin listener shows: /stats, /stats/prometheus, /clusters, /config, /plugins.
// Main thread.
#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "core/accesslog/registry.h"
#include "core/api/common.h"
#include "core/proxy/local_reply.h"
#include "core/server/admin.h"
#include "core/server/admin_summary.h"
#include "core/server/server.h"
#include "core/server/version.h"
#include "core/stats/families.h"
#include "core/stats/text_format.h"
#include "core/tls/tls_io.h"
#include "core/upstream/cluster_state.h"
#include "core/upstream/health/manager.h"
#include "core/upstream/host.h"

namespace sluice::server {
namespace {

std::string jsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "\"" : ", \"") + proxy::jsonEscape(items[i]) + "\"";
  }
  return out + "]";
}

std::string sha256Hex(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

// A value the admin computes at scrape time (one sample, no labels unless given).
void computed(std::string* out, const char* name, const char* help, stats::Kind kind,
              const stats::Labels& labels, double value) {
  stats::appendHeader(out, name, help, kind);
  stats::appendSample(out, name, labels, stats::formatValue(value));
}

const char* kindName(sluice_plugin_kind kind) {
  switch (kind) {
    case SLUICE_PLUGIN_KIND_FILTER:
      return "filter";
    case SLUICE_PLUGIN_KIND_BALANCER:
      return "balancer";
    case SLUICE_PLUGIN_KIND_DISCOVERY:
      return "discovery";
    default:
      return "unknown";
  }
}

}  // namespace

std::string Admin::statsJson() const {
  const stats::Registry& r = stats::defaultRegistry();
  auto total = [&](const stats::FamilySpec& f) { return std::to_string(r.sum(f.name)); };
  auto cls = [&](const char* c) {
    return std::to_string(r.sum(stats::kDownstreamRequests.name, "status_class", c));
  };
  std::string out = "{\n";
  out += "  \"workers\": " + std::to_string(server_.workers().size()) + ",\n";
  out += "  \"started_at\": " + std::to_string(server_.startedAtUnix()) + ",\n";
  out += "  \"draining\": " + std::string(draining_ ? "true" : "false") + ",\n";
  out += "  \"config_version\": " + std::to_string(server_.configVersion()) + ",\n";
  out += "  \"reloads_ok\": " + std::to_string(server_.reloadsOk()) + ",\n";
  out += "  \"reloads_failed\": " + std::to_string(server_.reloadsFailed()) + ",\n";
  {
    std::vector<uint64_t> t(server_.reloadApplyTimes().begin(), server_.reloadApplyTimes().end());
    std::sort(t.begin(), t.end());
    auto pct = [&](double p) -> uint64_t {
      return t.empty() ? 0 : t[static_cast<size_t>(p * static_cast<double>(t.size() - 1))];
    };
    out += "  \"reload_apply_us_p50\": " + std::to_string(pct(0.5)) + ",\n";
    out += "  \"reload_apply_us_p99\": " + std::to_string(pct(0.99)) + ",\n";
    out += "  \"reload_apply_us_max\": " + std::to_string(t.empty() ? 0 : t.back()) + ",\n";
  }
  out += "  \"downstream_cx_total\": " + total(stats::kDownstreamCxTotal) + ",\n";
  out += "  \"downstream_cx_active\": " + total(stats::kDownstreamCxActive) + ",\n";
  out += "  \"downstream_rq_total\": " + total(stats::kDownstreamReceived) + ",\n";
  out += "  \"downstream_rq_1xx\": " + cls("1xx") + ",\n";
  out += "  \"downstream_rq_2xx\": " + cls("2xx") + ",\n";
  out += "  \"downstream_rq_3xx\": " + cls("3xx") + ",\n";
  out += "  \"downstream_rq_4xx\": " + cls("4xx") + ",\n";
  out += "  \"downstream_rq_5xx\": " + cls("5xx") + ",\n";
  out += "  \"downstream_rq_bad\": " + total(stats::kDownstreamRefused) + ",\n";
  out += "  \"upstream_cx_total\": " + total(stats::kUpstreamCxCreated) + ",\n";
  out += "  \"upstream_cx_connect_fail\": " + total(stats::kUpstreamConnectFailures) + ",\n";
  out += "  \"upstream_cx_reused\": " + total(stats::kUpstreamCxReused) + ",\n";
  out += "  \"upstream_rq_timeout\": " + total(stats::kUpstreamTimeouts) + ",\n";
  out += "  \"upstream_rq_retry\": " + total(stats::kUpstreamRetries) + ",\n";
  out += "  \"upstream_rq_reset\": " + total(stats::kUpstreamResets) + ",\n";
  out += "  \"tunnels_active\": " + total(stats::kDownstreamTunnelsActive) + ",\n";
  out += "  \"tunnels_total\": " + total(stats::kDownstreamTunnels) + ",\n";
  out += "  \"tls_handshakes_full\": " +
         std::to_string(r.sum(stats::kTlsHandshakes.name, "result", "full")) + ",\n";
  out += "  \"tls_handshakes_resumed\": " +
         std::to_string(r.sum(stats::kTlsHandshakes.name, "result", "resumed")) + ",\n";
  for (int i = 0; i < tls::kHandshakeFailureCount; ++i) {
    const char* reason = tls::failureLabel(static_cast<tls::HandshakeFailure>(i));
    out += std::string("  \"tls_handshakes_failed_") + reason +
           "\": " + std::to_string(r.sum(stats::kTlsHandshakeFailures.name, "reason", reason)) +
           ",\n";
  }
  out +=
      "  \"access_log_dropped\": " + std::to_string(accesslog::Registry::global().dropped()) + "\n";
  out += "}\n";
  return out;
}

std::string Admin::summaryJson() const {
  SummaryFacts f;
  f.now_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
  f.started_at = server_.startedAtUnix();
  f.version = kVersion;
  f.workers = server_.workers().size();
  f.config_version = server_.configVersion();
  f.reloads_ok = server_.reloadsOk();
  f.reloads_failed = server_.reloadsFailed();
  f.last_reload_at = server_.lastReloadAt();
  f.last_reload_ok = server_.lastReload().ok;
  f.draining = draining_;
  for (const config::Listener& l : server_.built().config->listeners) {
    f.listeners.push_back({l.name, l.address, l.context_path, l.tls.enabled});
  }
  return server::summaryJson(f, stats::defaultRegistry());
}

std::string Admin::prometheusText() const {
  std::string out;
  out.reserve(64 * 1024);
  stats::defaultRegistry().writePrometheus(&out);
  using stats::Kind;
  const std::string abi = std::to_string(SLUICE_ABI_MAJOR) + "." + std::to_string(SLUICE_ABI_MINOR);
  computed(&out, "sluice_build_info", "sluice version and plugin ABI (always 1).", Kind::kGauge,
           {{"version", kVersion}, {"abi", abi}}, 1);
  computed(&out, "sluice_start_time_seconds", "When sluice started (Unix time).", Kind::kGauge, {},
           static_cast<double>(server_.startedAtUnix()));
  computed(&out, "sluice_workers", "Worker threads.", Kind::kGauge, {},
           static_cast<double>(server_.workers().size()));
  computed(&out, "sluice_config_version",
           "Version of the running config (1 at start, +1 per "
           "applied reload).",
           Kind::kGauge, {}, static_cast<double>(server_.configVersion()));
  computed(&out, "sluice_draining", "1 once a drain began.", Kind::kGauge, {}, draining_ ? 1 : 0);
  stats::appendHeader(&out, "sluice_reloads_total",
                      "Config reloads applied (ok) or refused (the old config kept serving).",
                      Kind::kCounter);
  stats::appendSample(&out, "sluice_reloads_total", {{"result", "ok"}},
                      std::to_string(server_.reloadsOk()));
  stats::appendSample(&out, "sluice_reloads_total", {{"result", "refused"}},
                      std::to_string(server_.reloadsFailed()));
  stats::appendHeader(&out, "sluice_cluster_hosts", "Hosts in each cluster's current host set.",
                      Kind::kGauge);
  for (const auto& [name, c] : server_.clusterManager().clusters()) {
    stats::appendSample(&out, "sluice_cluster_hosts", {{"cluster", name}},
                        std::to_string(c.hosts != nullptr ? c.hosts->size() : 0));
  }
  stats::appendHeader(&out, "sluice_upstream_requests_active",
                      "Requests in flight to each host, over all workers (at most the cluster's "
                      "max_requests_per_host when set).",
                      Kind::kGauge);
  for (const auto& [name, c] : server_.clusterManager().clusters()) {
    for (size_t i = 0; c.hosts != nullptr && i < c.hosts->size(); ++i) {
      const upstream::Host& h = *c.hosts->at(i).host;
      stats::appendSample(&out, "sluice_upstream_requests_active",
                          {{"cluster", name}, {"host", h.address()}}, std::to_string(h.active()));
    }
  }
  // In-flight counts shared by the workers (retry budget, circuit breakers).
  using State = upstream::ClusterState;
  struct StateGauge {
    const char* name;
    const char* help;
    std::atomic<int64_t> State::*field;
  };
  static const StateGauge kStateGauges[] = {
      {"sluice_upstream_cluster_requests_active",
       "Requests in flight to each cluster (retries and backoff included).",
       &State::active_requests},
      {"sluice_upstream_pending_requests", "Tries waiting for a new upstream connection to open.",
       &State::pending_requests},
      {"sluice_upstream_cluster_connections",
       "Upstream connections open per cluster (what circuit_breakers.max_connections counts).",
       &State::connections},
  };
  for (const StateGauge& g : kStateGauges) {
    stats::appendHeader(&out, g.name, g.help, Kind::kGauge);
    for (const auto& [name, c] : server_.clusterManager().clusters()) {
      std::shared_ptr<State> st = State::forCluster(name);
      stats::appendSample(&out, g.name, {{"cluster", name}},
                          std::to_string((*st.*g.field).load(std::memory_order_relaxed)));
    }
  }
  return out;
}

std::string Admin::configJson() const {
  const config::Config& c = *server_.built().config;
  const ReloadResult& last = server_.lastReload();
  std::string out = "{\n  \"version\": " + std::to_string(server_.configVersion()) + ",\n";
  out += "  \"sha256\": \"" + sha256Hex(c.text) + "\",\n";
  out += "  \"file\": \"" + proxy::jsonEscape(c.file) + "\",\n";
  out += "  \"reloads_ok\": " + std::to_string(server_.reloadsOk()) + ",\n";
  out += "  \"reloads_failed\": " + std::to_string(server_.reloadsFailed()) + ",\n";
  if (server_.lastReloadAt() != 0) {
    out += "  \"last_reload\": {\"at\": " + std::to_string(server_.lastReloadAt()) +
           ", \"ok\": " + (last.ok ? "true" : "false") +
           ", \"version\": " + std::to_string(last.version) +
           ", \"changes\": " + jsonList(last.changes) + ", \"errors\": " + jsonList(last.errors) +
           "},\n";
  }
  out += "  \"text\": \"" + proxy::jsonEscape(c.text) + "\"\n}\n";
  return out;
}

std::string Admin::clustersJson() const {
  std::string out = "{\"clusters\": [";
  bool first = true;
  for (const auto& [name, c] : server_.clusterManager().clusters()) {
    out += first ? "\n" : ",\n";
    first = false;
    out += "  {\"name\": \"" + proxy::jsonEscape(c.info->config.name) + "\", \"balancer\": \"" +
           proxy::jsonEscape(c.info->balancer->name()) +
           "\", \"panic\": " + (server_.clusterManager().health().panic(name) ? "true" : "false") +
           ", \"max_requests_per_host\": " + std::to_string(c.info->config.max_requests_per_host) +
           ", \"max_queue\": " + std::to_string(c.info->config.max_queue) +
           ", \"queue_length\": " + std::to_string(c.queue != nullptr ? c.queue->size() : 0) + ", ";
    const uint64_t now_ms = upstream::health::HealthManager::nowMs();
    std::shared_ptr<upstream::ClusterState> st = upstream::ClusterState::forCluster(name);
    const config::CircuitBreakers& cb = c.info->config.circuit_breakers;
    out += "\"requests_active\": " + std::to_string(st->active_requests.load()) +
           ", \"retries_active\": " + std::to_string(st->active_retries.load()) +
           ", \"pending_requests\": " + std::to_string(st->pending_requests.load()) +
           ", \"connections\": " + std::to_string(st->connections.load()) +
           ", \"circuit_breakers\": {\"max_connections\": " + std::to_string(cb.max_connections) +
           ", \"max_pending_requests\": " + std::to_string(cb.max_pending_requests) +
           ", \"max_requests\": " + std::to_string(cb.max_requests) +
           ", \"max_retries\": " + std::to_string(cb.max_retries) + "}, \"hosts\": [";
    for (size_t i = 0; i < c.hosts->size(); ++i) {
      const upstream::HostEntry& e = c.hosts->at(i);
      const upstream::HostHealth& h = e.host->health();
      const uint64_t until = h.ejected_until_ms.load();
      const bool ejected = h.ejected.load();
      out += i == 0 ? "" : ", ";
      out += "{\"address\": \"" + proxy::jsonEscape(e.host->address()) +
             "\", \"weight\": " + std::to_string(e.weight) +
             ", \"healthy\": " + (e.host->healthy() ? "true" : "false") +
             ", \"active_requests\": " + std::to_string(e.host->active()) +
             ", \"total_requests\": " + std::to_string(e.host->totalRequests().load()) +
             ", \"health\": \"" + upstream::activeHealthName(h.active.load()) +
             "\", \"ejected\": " + (ejected ? "true" : "false") + ", \"ejected_for_ms\": " +
             std::to_string(ejected && until > now_ms ? until - now_ms : 0) +
             ", \"times_ejected\": " + std::to_string(h.times_ejected.load()) +
             ", \"effective_weight\": " + std::to_string(c.hosts->effectiveWeight(i)) +
             ", \"last_check_failure\": \"" + proxy::jsonEscape(h.last_failure) + "\"}";
    }
    out += "]}";
  }
  out += "\n]}\n";
  return out;
}

std::string Admin::pluginsJson() const {
  // What uses each loaded library in the running config: "listener edge", "route api on
  // listener edge", "cluster svc", "discovery 0".
  std::map<const plugin::Library*, std::vector<std::string>> users;
  auto use = [&](const plugin::Library* lib, std::string who) {
    auto& list = users[lib];
    if (std::find(list.begin(), list.end(), who) == list.end()) list.push_back(std::move(who));
  };
  const Built& built = server_.built();
  for (const auto& l : built.listeners) {
    for (const auto& f : l->filters) use(&f->library(), "listener " + l->config.name);
  }
  for (const auto& rc : built.route_chains) {
    for (size_t i = 0; i < rc.info->filters.size(); ++i) {
      const auto& base = rc.base->filters;
      const auto& f = rc.info->filters[i];
      if (std::find(base.begin(), base.end(), f) != base.end()) continue;  // the listener's
      use(&f->library(), "route " + rc.info->route + " on listener " + rc.info->config.name);
    }
  }
  for (const auto& c : built.clusters)
    use(&c.info->balancer->library(), "cluster " + c.info->config.name);
  for (size_t i = 0; i < built.discovery.size(); ++i) {
    use(&built.discovery[i].plugin->library(), "discovery " + std::to_string(i));
  }
  std::string out = "{\"plugins\": [";
  bool first = true;
  for (const auto& lib : server_.loader().libraries()) {
    const sluice_plugin_descriptor& d = lib->descriptor();
    char hash[32];
    std::snprintf(hash, sizeof(hash), "fnv1a64:%016llx",
                  static_cast<unsigned long long>(lib->contentHash()));
    out += first ? "\n" : ",\n";
    first = false;
    out += "  {\"name\": \"" + proxy::jsonEscape(lib->name()) + "\", \"kind\": \"" +
           kindName(d.kind) + "\", \"version\": \"" +
           proxy::jsonEscape(d.version != nullptr ? d.version : "") + "\", \"abi\": \"" +
           std::to_string(d.abi_major) + "." + std::to_string(d.abi_minor) + "\", \"file\": \"" +
           proxy::jsonEscape(lib->path()) + "\", \"content_hash\": \"" + hash +
           "\", \"used_by\": " + jsonList(users[lib.get()]) + "}";
  }
  out += "\n], \"host_abi\": \"" + std::to_string(SLUICE_ABI_MAJOR) + "." +
         std::to_string(SLUICE_ABI_MINOR) + "\"}\n";
  return out;
}

}  // namespace sluice::server
