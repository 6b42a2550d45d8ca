#include "core/server/admin.h"

#include <arpa/inet.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/accesslog/registry.h"
#include "core/proxy/local_reply.h"
#include "core/server/server.h"
#include "core/stats/text_format.h"

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

// SHA-256 of `text`, so two strings compare in constant time whatever their lengths.
void digest(std::string_view text, unsigned char out[SHA256_DIGEST_LENGTH]) {
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out);
}

constexpr char kPaths[] =
    "{\"error\":\"unknown admin path\",\"paths\":[\"/\",\"/healthz\",\"/ready\",\"/stats\","
    "\"/stats/prometheus\",\"/stats/summary\",\"/clusters\",\"/config\",\"/plugins\",\"POST "
    "/reload\","
    "\"POST /drain\"]}\n";

std::string reloadJson(const ReloadResult& r) {
  return std::string("{\"ok\": ") + (r.ok ? "true" : "false") +
         ", \"dry_run\": " + (r.dry_run ? "true" : "false") +
         ", \"version\": " + std::to_string(r.version) + ", \"changes\": " + jsonList(r.changes) +
         ", \"errors\": " + jsonList(r.errors) + "}\n";
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
  in_addr a4;
  loopback_ = host == "::1" || host == "localhost" ||
              (inet_pton(AF_INET, host.c_str(), &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127);
  http_ = evhttp_new(server_.base());
  // Each admin connection's bufferevent owns its socket (BEV_OPT_CLOSE_ON_FREE). Without it,
  // libevent 2.1's evhttp_connection_free closes the socket itself while the bufferevent's
  // events are still registered (their removal is deferred), so the main loop later ran
  // epoll_ctl(DEL) on a closed descriptor number — one a worker may have accepted meanwhile
  // (EBADF in strace; a data race on that descriptor under TSan, seen in reload tests that
  // POST /reload under load). With it, the bufferevent removes its events before it closes.
  evhttp_set_bevcb(
      http_,
      [](event_base* base, void*) -> bufferevent* {
        return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
      },
      nullptr);
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
  const bool post = evhttp_request_get_command(req) == EVHTTP_REQ_POST;
  std::string why;
  if (self->forgedByBrowser(req, post, &why)) {
    reply(req, 403, "Forbidden", "{\"error\":\"" + proxy::jsonEscape(why) + "\"}\n",
          "application/json");
    return;
  }
  if (post && !self->authorized(req)) {
    evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
                      "Bearer realm=\"sluice admin\"");
    reply(req, 401, "Unauthorized",
          "{\"error\":\"POST endpoints need Authorization: Bearer <admin token>\"}\n",
          "application/json");
    return;
  }
  self->handle(req, path, post);
}

void Admin::handle(evhttp_request* req, const std::string& path, bool post) {
  if (path == "/healthz") {
    reply(req, 200, "OK", "ok\n", "text/plain");
  } else if (path == "/ready") {
    if (draining_) {
      reply(req, 503, "Service Unavailable", "draining\n", "text/plain");
    } else {
      reply(req, 200, "OK", "ready\n", "text/plain");
    }
  } else if (path == "/stats") {
    reply(req, 200, "OK", statsJson(), "application/json");
  } else if (path == "/stats/summary") {
    reply(req, 200, "OK", summaryJson(), "application/json");
  } else if (path == "/stats/prometheus") {
    reply(req, 200, "OK", prometheusText(), stats::kPrometheusContentType);
  } else if (path == "/clusters") {
    reply(req, 200, "OK", clustersJson(), "application/json");
  } else if (path == "/config") {
    reply(req, 200, "OK", configJson(), "application/json");
  } else if (path == "/plugins") {
    reply(req, 200, "OK", pluginsJson(), "application/json");
  } else if (path == "/reload" || path == "/drain") {
    if (!post) {
      reply(req, 405, "Method Not Allowed", "{\"error\":\"use POST " + path + "\"}\n",
            "application/json");
      return;
    }
    if (path == "/drain") {
      drain(req);
      return;
    }
    bool dry_run = dryRunAsked(evhttp_request_get_uri(req));
    ReloadResult r = server_.reload("admin", dry_run);
    reply(req, r.ok ? 200 : 400, r.ok ? "OK" : "Bad Request", reloadJson(r), "application/json");
  } else if (post || !serveDashboard(req, path)) {
    reply(req, 404, "Not Found", kPaths, "application/json");
  }
}

bool Admin::forgedByBrowser(evhttp_request* req, bool post, std::string* why) const {
  const evkeyvalq* in = evhttp_request_get_input_headers(req);
  const char* host_header = evhttp_find_header(in, "Host");
  std::string host = host_header != nullptr ? host_header : "";
  for (char& c : host) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  if (loopback_ && !host.empty()) {
    std::string name = host;
    if (name.front() == '[') {
      name = name.substr(1, name.find(']') - 1);
    } else {
      name = name.substr(0, name.rfind(':'));
    }
    in6_addr a6;
    in_addr a4;
    bool literal =
        inet_pton(AF_INET, name.c_str(), &a4) == 1 || inet_pton(AF_INET6, name.c_str(), &a6) == 1;
    if (!literal && name != "localhost") {
      *why = "Host '" + host +
             "' refused: a loopback admin answers only IP addresses and "
             "localhost (DNS rebinding guard)";
      return true;
    }
  }
  const char* origin = evhttp_find_header(in, "Origin");
  if (post && origin != nullptr) {
    std::string o = origin;
    for (char& c : o) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
    if (o != "http://" + host) {
      *why = "cross-origin POST from '" + std::string(origin) + "' refused";
      return true;
    }
  }
  return false;
}

bool Admin::authorized(evhttp_request* req) const {
  const std::string& token = server_.built().config->admin_token;
  if (token.empty()) return true;
  const char* header = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
  if (header == nullptr) return false;
  std::string_view value(header);
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() < kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) return false;
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  unsigned char want[SHA256_DIGEST_LENGTH];
  unsigned char got[SHA256_DIGEST_LENGTH];
  digest(token, want);
  digest(value, got);
  return CRYPTO_memcmp(want, got, sizeof(want)) == 0;
}

void Admin::drain(evhttp_request* req) {
  if (draining_) {
    reply(req, 200, "OK", "{\"draining\": true, \"already\": true}\n", "application/json");
    return;
  }
  // Start once the answer is out: a drain with nothing in flight ends the loop at once.
  evhttp_request_set_on_complete_cb(
      req, [](evhttp_request*, void* arg) { static_cast<Server*>(arg)->drain("POST /drain"); },
      &server_);
  reply(req, 202, "Accepted", "{\"draining\": true}\n", "application/json");
}

}  // namespace sluice::server
