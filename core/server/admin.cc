#include "core/server/admin.h"

#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/accesslog/registry.h"
#include "core/proxy/local_reply.h"
#include "core/server/server.h"
#include "core/tls/tls_io.h"
#include "core/upstream/host.h"

namespace sluice::server {
namespace {

void reply(evhttp_request* req, int code, const char* reason, const std::string& body,
           const char* type) {
  evkeyvalq* out = evhttp_request_get_output_headers(req);
  evhttp_add_header(out, "Content-Type", type);
  evbuffer* buf = evbuffer_new();
  evbuffer_add(buf, body.data(), body.size());
  evhttp_send_reply(req, code, reason, buf);
  evbuffer_free(buf);
}

std::string jsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "\"" : ", \"") + proxy::jsonEscape(items[i]) + "\"";
  }
  return out + "]";
}

// `?dry_run`, `?dry_run=1|true|yes|on|anything` ask for a dry run; only an explicit
// 0/false/no/off (or no dry_run key at all) applies the config.
bool dryRunAsked(const char* uri) {
  const char* q = uri != nullptr ? strchr(uri, '?') : nullptr;
  if (q == nullptr) return false;
  evkeyvalq params;
  params.tqh_first = nullptr;
  params.tqh_last = &params.tqh_first;
  if (evhttp_parse_query_str(q + 1, &params) != 0) {
    evhttp_clear_headers(&params);
    return true;  // unparseable: the safe reading is "do not apply"
  }
  const char* v = evhttp_find_header(&params, "dry_run");
  bool asked = v != nullptr;
  if (asked) {
    std::string value = v;
    for (char& c : value) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    asked = !(value == "0" || value == "false" || value == "no" || value == "off");
  }
  evhttp_clear_headers(&params);
  return asked;
}

std::string reloadJson(const ReloadResult& r) {
  return std::string("{\"ok\": ") + (r.ok ? "true" : "false") +
         ", \"dry_run\": " + (r.dry_run ? "true" : "false") +
         ", \"version\": " + std::to_string(r.version) + ", \"changes\": " + jsonList(r.changes) +
         ", \"errors\": " + jsonList(r.errors) + "}\n";
}

std::string sha256Hex(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace

Admin::Admin(Server& server) : server_(server) {}

Admin::~Admin() {
  if (http_ != nullptr) evhttp_free(http_);
}

bool Admin::listen(const std::string& address, std::string* error) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    *error = "bad admin address '" + address + "'";
    return false;
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  int port = atoi(address.c_str() + colon + 1);
  http_ = evhttp_new(server_.base());
  evhttp_set_gencb(http_, &Admin::onRequest, this);
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD);
  if (evhttp_bind_socket(http_, host.c_str(), static_cast<uint16_t>(port)) != 0) {
    *error = "cannot bind admin listener " + address + ": " + strerror(errno);
    return false;
  }
  return true;
}

void Admin::onRequest(evhttp_request* req, void* arg) {
  auto* self = static_cast<Admin*>(arg);
  const char* uri = evhttp_request_get_uri(req);
  std::string path = uri != nullptr ? uri : "/";
  path = path.substr(0, path.find('?'));
  if (path == "/ready") {
    if (self->draining_) {
      reply(req, 503, "Service Unavailable", "draining\n", "text/plain");
    } else {
      reply(req, 200, "OK", "ready\n", "text/plain");
    }
  } else if (path == "/stats") {
    reply(req, 200, "OK", self->statsJson(), "application/json");
  } else if (path == "/clusters") {
    reply(req, 200, "OK", self->clustersJson(), "application/json");
  } else if (path == "/config") {
    reply(req, 200, "OK", self->configJson(), "application/json");
  } else if (path == "/reload") {
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
      reply(req, 405, "Method Not Allowed", "{\"error\":\"use POST /reload\"}\n",
            "application/json");
      return;
    }
    bool dry_run = dryRunAsked(uri);
    ReloadResult r = self->server_.reload("admin", dry_run);
    reply(req, r.ok ? 200 : 400, r.ok ? "OK" : "Bad Request", reloadJson(r), "application/json");
  } else {
    reply(req, 404, "Not Found",
          "{\"error\":\"unknown admin path\",\"paths\":[\"/ready\",\"/stats\",\"/clusters\","
          "\"/config\",\"POST /reload\"]}\n",
          "application/json");
  }
}

std::string Admin::statsJson() const {
  event::WorkerStats sum;
  auto add = [](std::atomic<uint64_t>& to, const std::atomic<uint64_t>& from) {
    to.store(to.load(std::memory_order_relaxed) + from.load(std::memory_order_relaxed),
             std::memory_order_relaxed);
  };
  for (const auto& w : server_.workers()) {
    const event::WorkerStats& s = w->stats();
    add(sum.downstream_cx_total, s.downstream_cx_total);
    add(sum.downstream_cx_active, s.downstream_cx_active);
    add(sum.downstream_rq_total, s.downstream_rq_total);
    add(sum.downstream_rq_1xx, s.downstream_rq_1xx);
    add(sum.downstream_rq_2xx, s.downstream_rq_2xx);
    add(sum.downstream_rq_3xx, s.downstream_rq_3xx);
    add(sum.downstream_rq_4xx, s.downstream_rq_4xx);
    add(sum.downstream_rq_5xx, s.downstream_rq_5xx);
    add(sum.downstream_rq_bad, s.downstream_rq_bad);
    add(sum.upstream_cx_total, s.upstream_cx_total);
    add(sum.upstream_cx_connect_fail, s.upstream_cx_connect_fail);
    add(sum.upstream_cx_reused, s.upstream_cx_reused);
    add(sum.upstream_rq_timeout, s.upstream_rq_timeout);
    add(sum.upstream_rq_retry, s.upstream_rq_retry);
    add(sum.upstream_rq_reset, s.upstream_rq_reset);
    add(sum.tunnels_active, s.tunnels_active);
    add(sum.tunnels_total, s.tunnels_total);
    add(sum.tls_handshakes_full, s.tls_handshakes_full);
    add(sum.tls_handshakes_resumed, s.tls_handshakes_resumed);
    for (int i = 0; i < tls::kHandshakeFailureCount; ++i) {
      add(sum.tls_handshakes_failed[i], s.tls_handshakes_failed[i]);
    }
  }
  auto v = [](const std::atomic<uint64_t>& a) { return std::to_string(a.load()); };
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
  out += "  \"downstream_cx_total\": " + v(sum.downstream_cx_total) + ",\n";
  out += "  \"downstream_cx_active\": " + v(sum.downstream_cx_active) + ",\n";
  out += "  \"downstream_rq_total\": " + v(sum.downstream_rq_total) + ",\n";
  out += "  \"downstream_rq_1xx\": " + v(sum.downstream_rq_1xx) + ",\n";
  out += "  \"downstream_rq_2xx\": " + v(sum.downstream_rq_2xx) + ",\n";
  out += "  \"downstream_rq_3xx\": " + v(sum.downstream_rq_3xx) + ",\n";
  out += "  \"downstream_rq_4xx\": " + v(sum.downstream_rq_4xx) + ",\n";
  out += "  \"downstream_rq_5xx\": " + v(sum.downstream_rq_5xx) + ",\n";
  out += "  \"downstream_rq_bad\": " + v(sum.downstream_rq_bad) + ",\n";
  out += "  \"upstream_cx_total\": " + v(sum.upstream_cx_total) + ",\n";
  out += "  \"upstream_cx_connect_fail\": " + v(sum.upstream_cx_connect_fail) + ",\n";
  out += "  \"upstream_cx_reused\": " + v(sum.upstream_cx_reused) + ",\n";
  out += "  \"upstream_rq_timeout\": " + v(sum.upstream_rq_timeout) + ",\n";
  out += "  \"upstream_rq_retry\": " + v(sum.upstream_rq_retry) + ",\n";
  out += "  \"upstream_rq_reset\": " + v(sum.upstream_rq_reset) + ",\n";
  out += "  \"tunnels_active\": " + v(sum.tunnels_active) + ",\n";
  out += "  \"tunnels_total\": " + v(sum.tunnels_total) + ",\n";
  out += "  \"tls_handshakes_full\": " + v(sum.tls_handshakes_full) + ",\n";
  out += "  \"tls_handshakes_resumed\": " + v(sum.tls_handshakes_resumed);
  for (int i = 0; i < tls::kHandshakeFailureCount; ++i) {
    out += std::string(",\n  \"tls_handshakes_failed_") +
           tls::failureLabel(static_cast<tls::HandshakeFailure>(i)) +
           "\": " + v(sum.tls_handshakes_failed[i]);
  }
  out += ",\n";
  out +=
      "  \"access_log_dropped\": " + std::to_string(accesslog::Registry::global().dropped()) + "\n";
  out += "}\n";
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
           proxy::jsonEscape(c.info->balancer->name()) + "\", \"hosts\": [";
    for (size_t i = 0; i < c.hosts->size(); ++i) {
      const upstream::HostEntry& e = c.hosts->at(i);
      out += i == 0 ? "" : ", ";
      out += "{\"address\": \"" + proxy::jsonEscape(e.host->address()) +
             "\", \"weight\": " + std::to_string(e.weight) +
             ", \"healthy\": " + (e.host->healthy() ? "true" : "false") +
             ", \"active_requests\": " + std::to_string(e.host->active()) +
             ", \"total_requests\": " + std::to_string(e.host->totalRequests().load()) + "}";
    }
    out += "]}";
  }
  out += "\n]}\n";
  return out;
}

}  // namespace sluice::server
