#include "filters/basic_auth/basic_auth.h"

#include <openssl/rand.h>

#include <random>
#include <system_error>
#include <utility>

namespace sluice::filters {
namespace {

constexpr size_t kMaxAuthorizationBytes = 8192;

}  // namespace

BasicAuthConfig::BasicAuthConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"htpasswd_file", "realm", "strip_credential", "consumer_header",
                        "cache_ttl_s", "cache_max_entries", "verify_threads", "verify_queue"});
  if (!node.has("htpasswd_file")) node.fail("missing 'htpasswd_file'");
  sdk::ConfigNode file = node["htpasswd_file"];
  std::string path;
  std::string text = auth::readConfigFile(file, 16u << 20, &path);
  std::string error;
  if (!basic_auth::parseHtpasswd(text, &users, &dummy_hash, &error)) {
    file.fail(path + ":" + error);
  }
  if (users.empty()) file.fail(path + ": no users");
  realm = node.getString("realm", realm);
  for (char c : realm) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      node["realm"].fail("realm with a control character");
    }
  }
  www_authenticate = "Basic realm=\"" + auth::quoteEscape(realm) + "\", charset=\"UTF-8\"";
  strip_credential = node.getBool("strip_credential", strip_credential);
  consumer_header = auth::headerNameKey(node, "consumer_header", consumer_header, true);
  if (auth::equalsIgnoreCase(consumer_header, "Authorization")) {
    node["consumer_header"].fail("consumer_header cannot be Authorization");
  }
  authorization_name = sdk::HeaderName(host, "Authorization");
  if (!consumer_header.empty()) consumer_header_name = sdk::HeaderName(host, consumer_header);
  cache_ttl_us = static_cast<uint64_t>(node.getInt("cache_ttl_s", 60, 0, 86400)) * 1'000'000;
  cache_max_entries = static_cast<size_t>(node.getInt("cache_max_entries", 10000, 1, 10'000'000));
  counters = auth::DecisionCounters(host, {"missing credentials", "malformed credentials",
                                           "invalid credentials", "verification overloaded"});
  int64_t threads = node.getInt("verify_threads", 2, 0, 64);
  size_t queue = static_cast<size_t>(node.getInt("verify_queue", 1024, 1, 1'000'000));
  if (threads > 0) {
    try {
      pool = std::make_unique<basic_auth::VerifyPool>(static_cast<size_t>(threads), queue);
    } catch (const std::system_error& e) {
      node["verify_threads"].fail(std::string("cannot start verification threads: ") + e.what());
    }
  }
}

std::string parseBasicCredentials(std::string_view authorization, std::string* user,
                                  std::string* password) {
  constexpr std::string_view kScheme = "basic";
  size_t sp = authorization.find(' ');
  if (sp == std::string_view::npos) {
    // "Basic" alone (no credentials) is malformed; any other lone word is another scheme.
    return auth::equalsIgnoreCase(authorization, kScheme) ? "malformed credentials"
                                                          : "missing credentials";
  }
  if (!auth::equalsIgnoreCase(authorization.substr(0, sp), kScheme)) {
    return "missing credentials";
  }
  std::string_view token = authorization.substr(sp);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  std::optional<std::string> decoded = auth::base64Decode(token);
  if (!decoded || token.empty()) return "malformed credentials";
  size_t colon = decoded->find(':');
  if (colon == std::string::npos) return "malformed credentials";
  *user = decoded->substr(0, colon);
  *password = decoded->substr(colon + 1);
  std::fill(decoded->begin(), decoded->end(), '\0');
  return "";
}

BasicAuthWorker::BasicAuthWorker(const BasicAuthConfig& config) : config_(config) {
  if (RAND_bytes(salt_.data(), static_cast<int>(salt_.size())) != 1) {
    std::random_device device;
    for (uint8_t& b : salt_) b = static_cast<uint8_t>(device());
  }
}

auth::Digest BasicAuthWorker::digestOf(const std::string& user, std::string_view password) const {
  std::string material(reinterpret_cast<const char*>(salt_.data()), salt_.size());
  material += user;
  material.push_back('\0');
  material.append(password.data(), password.size());
  auth::Digest d = auth::sha256(material);
  std::fill(material.begin(), material.end(), '\0');
  return d;
}

void BasicAuthWorker::remember(const std::string& user, const auth::Digest& digest,
                               uint64_t now_us) {
  if (config_.cache_ttl_us == 0) return;
  if (cache_.size() >= config_.cache_max_entries && cache_.find(user) == cache_.end()) {
    for (auto it = cache_.begin(); it != cache_.end();) {
      it = it->second.expires_us <= now_us ? cache_.erase(it) : std::next(it);
    }
    if (cache_.size() >= config_.cache_max_entries) cache_.erase(cache_.begin());
  }
  cache_[user] = Entry{digest, now_us + config_.cache_ttl_us};
}

BasicAuthWorker::Lookup BasicAuthWorker::lookup(const std::string& user, std::string_view password,
                                                uint64_t now_us) {
  Lookup out;
  auto known = config_.users.find(user);
  if (known == config_.users.end()) {
    // Same work as for a real user, so timing does not reveal which names exist.
    out.hash = &config_.dummy_hash;
    return out;
  }
  out.known = true;
  out.hash = &known->second;
  if (config_.cache_ttl_us > 0) {
    out.digest = digestOf(user, password);
    auto hit = cache_.find(user);
    if (hit != cache_.end()) {
      if (hit->second.expires_us > now_us && auth::digestEqual(hit->second.digest, out.digest)) {
        out.cached = true;
      } else if (hit->second.expires_us <= now_us) {
        cache_.erase(hit);
      }
    }
  }
  return out;
}

bool BasicAuthWorker::check(const std::string& user, std::string_view password, uint64_t now_us) {
  Lookup l = lookup(user, password, now_us);
  if (l.cached) return true;
  bool ok = verifyHere(password, *l.hash) && l.known;
  if (ok) remember(user, l.digest, now_us);
  return ok;
}

sdk::FilterStatus BasicAuthFilter::finish(sdk::Stream& stream, bool ok, const std::string& user,
                                          const auth::Digest* digest) {
  if (!ok) {
    config_.counters.denied("invalid credentials");
    return auth::replyUnauthorized(stream, "invalid credentials", config_.www_authenticate);
  }
  if (digest != nullptr) worker_.remember(user, *digest, stream.startTimeUs());
  config_.counters.allowed();
  if (config_.strip_credential) {
    stream.removeHeader(sdk::HeaderMap::kRequest, config_.authorization_name);
  }
  auth::setConsumer(stream, user, "basic", config_.consumer_header_name);
  return sdk::FilterStatus::kContinue;
}

sdk::FilterStatus BasicAuthFilter::onRequestHeaders(sdk::Stream& stream, bool end_stream) {
  // A client-sent consumer header never reaches the upstream (by the names resolved at config
  // load: no lookup of them per request).
  if (!config_.consumer_header.empty()) {
    stream.removeHeader(sdk::HeaderMap::kRequest, config_.consumer_header_name);
  }
  auto authorization = stream.requestHeader(config_.authorization_name);
  std::string reason;
  std::string user, password;
  if (!authorization) {
    reason = "missing credentials";
  } else if (stream.header(sdk::HeaderMap::kRequest, config_.authorization_name, 1) ||
             authorization->size() > kMaxAuthorizationBytes) {
    reason = "malformed credentials";
  } else {
    reason = parseBasicCredentials(*authorization, &user, &password);
  }
  if (!reason.empty()) {
    config_.counters.denied(reason);
    return auth::replyUnauthorized(stream, reason, config_.www_authenticate);
  }
  BasicAuthWorker::Lookup l = worker_.lookup(user, password, stream.startTimeUs());
  if (l.cached) return finish(stream, true, user, nullptr);  // no refresh: TTL from the crypt
  if (config_.pool == nullptr) {
    bool ok = worker_.verifyHere(password, *l.hash) && l.known;
    std::fill(password.begin(), password.end(), '\0');
    return finish(stream, ok, user, &l.digest);
  }
  // Off the event loop: pause, verify on a pool thread, come back through the stream's ref. The
  // filter (`this`) is only touched when the stream is still alive (it lives as long as the
  // stream); a request that ended meanwhile gets nullptr and nothing happens.
  worker_.countCrypt();
  sdk::StreamRef ref = stream.ref();
  bool queued =
      config_.pool->submit([ref, self = this, user, password, hash = *l.hash, known = l.known,
                            digest = l.digest](basic_auth::Verifier& verifier) mutable {
        bool ok = verifier.verify(password, hash) && known;
        std::fill(password.begin(), password.end(), '\0');
        ref.post([self, ok, user, digest](sdk::Stream* s) {
          if (s == nullptr) return;
          if (self->finish(*s, ok, user, &digest) == sdk::FilterStatus::kContinue) s->resume();
        });
      });
  std::fill(password.begin(), password.end(), '\0');
  if (!queued) {
    config_.counters.denied("verification overloaded");
    stream.sendLocalReply(503, R"({"error":"unavailable","reason":"verification overloaded"})",
                          "application/json", {{"Retry-After", "1"}});
    return sdk::FilterStatus::kStop;
  }
  return sdk::FilterStatus::kPause;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN_WITH_WORKER("basic_auth", "1.0.0", sluice::filters::BasicAuthConfig,
                                 sluice::filters::BasicAuthWorker, sluice::filters::BasicAuthFilter)
