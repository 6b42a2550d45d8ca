#include "filters/basic_auth/basic_auth.h"

#include <openssl/rand.h>

#include <random>
#include <utility>

namespace sluice::filters {
namespace {

constexpr size_t kMaxAuthorizationBytes = 8192;

}  // namespace

BasicAuthConfig::BasicAuthConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"htpasswd_file", "realm", "strip_credential", "consumer_header",
                        "cache_ttl_s", "cache_max_entries"});
  if (!node.has("htpasswd_file")) node.fail("missing 'htpasswd_file'");
  sdk::ConfigNode file = node["htpasswd_file"];
  std::string path = file.asString();
  std::string text = auth::readConfigFile(file);
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
  cache_ttl_us = static_cast<uint64_t>(node.getInt("cache_ttl_s", 60, 0, 86400)) * 1'000'000;
  cache_max_entries = static_cast<size_t>(node.getInt("cache_max_entries", 10000, 1, 10'000'000));
  counters = auth::DecisionCounters(
      host, {"missing credentials", "malformed credentials", "invalid credentials"});
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
  if (cache_.size() >= config_.cache_max_entries && cache_.find(user) == cache_.end()) {
    for (auto it = cache_.begin(); it != cache_.end();) {
      it = it->second.expires_us <= now_us ? cache_.erase(it) : std::next(it);
    }
    if (cache_.size() >= config_.cache_max_entries) cache_.erase(cache_.begin());
  }
  cache_[user] = Entry{digest, now_us + config_.cache_ttl_us};
}

bool BasicAuthWorker::check(const std::string& user, std::string_view password, uint64_t now_us) {
  auto known = config_.users.find(user);
  if (known == config_.users.end()) {
    // Same work as for a real user, so timing does not reveal which names exist.
    ++crypt_calls_;
    verifier_.verify(password, config_.dummy_hash);
    return false;
  }
  bool caching = config_.cache_ttl_us > 0;
  auth::Digest digest{};
  if (caching) {
    digest = digestOf(user, password);
    auto hit = cache_.find(user);
    if (hit != cache_.end()) {
      if (hit->second.expires_us > now_us && auth::digestEqual(hit->second.digest, digest)) {
        return true;
      }
      if (hit->second.expires_us <= now_us) cache_.erase(hit);
    }
  }
  ++crypt_calls_;
  if (!verifier_.verify(password, known->second)) return false;
  if (caching) remember(user, digest, now_us);
  return true;
}

sdk::FilterStatus BasicAuthFilter::onRequestHeaders(sdk::Stream& stream, bool end_stream) {
  if (!config_.consumer_header.empty()) {
    stream.removeHeader(sdk::HeaderMap::kRequest, config_.consumer_header);
  }
  auto authorization = stream.requestHeader("Authorization");
  std::string reason;
  std::string user, password;
  if (!authorization) {
    reason = "missing credentials";
  } else if (stream.header(sdk::HeaderMap::kRequest, "Authorization", 1) ||
             authorization->size() > kMaxAuthorizationBytes) {
    reason = "malformed credentials";
  } else {
    reason = parseBasicCredentials(*authorization, &user, &password);
  }
  if (reason.empty() && !worker_.check(user, password, stream.startTimeUs())) {
    reason = "invalid credentials";
  }
  std::fill(password.begin(), password.end(), '\0');
  if (!reason.empty()) {
    config_.counters.denied(reason);
    return auth::replyUnauthorized(stream, reason, config_.www_authenticate);
  }
  config_.counters.allowed();
  if (config_.strip_credential) stream.removeHeader(sdk::HeaderMap::kRequest, "Authorization");
  auth::setConsumer(stream, user, "basic", config_.consumer_header);
  return sdk::FilterStatus::kContinue;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN_WITH_WORKER("basic_auth", "1.0.0", sluice::filters::BasicAuthConfig,
                                 sluice::filters::BasicAuthWorker, sluice::filters::BasicAuthFilter)
