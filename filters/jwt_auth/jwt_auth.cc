#include "filters/jwt_auth/jwt_auth.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "filters/auth_common/auth_common.h"

namespace sluice::filters {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxForwardedValue = 4096;

bool isContextKeyChars(std::string_view s) {
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> nonEmptyList(const sdk::ConfigNode& node) {
  std::vector<std::string> out = node.asStringList();
  for (const std::string& s : out) {
    if (s.empty()) node.fail("empty string in list");
  }
  return out;
}

void readAlgorithms(const sdk::ConfigNode& node, jwt::Policy* policy) {
  if (node.isNull()) node.fail("missing 'algorithms' (a list of HS256, RS256, ES256)");
  for (const std::string& name : node.asStringList()) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == "none") node.fail("algorithm 'none' is never accepted");
    std::optional<jwt::Algorithm> alg = jwt::algorithmFromName(name);
    if (!alg) node.fail("unsupported algorithm '" + name + "' (expected HS256, RS256 or ES256)");
    if (std::find(policy->algorithms.begin(), policy->algorithms.end(), *alg) ==
        policy->algorithms.end()) {
      policy->algorithms.push_back(*alg);
    }
  }
  if (policy->algorithms.empty()) node.fail("'algorithms' is empty");
}

void readKeys(const sdk::ConfigNode& node, const sdk::Host& host, jwt::Policy* policy) {
  if (node.has("jwks_file")) {
    sdk::ConfigNode file = node["jwks_file"];
    std::string path;
    std::string text = auth::readConfigFile(file, 1u << 20, &path);
    std::vector<std::string> skipped;
    try {
      policy->keys = jwt::parseJwks(text, &skipped);
    } catch (const std::exception& e) {
      file.fail(path + ": " + e.what());
    }
    for (const std::string& s : skipped) {
      host.log(sdk::LogLevel::kWarn, "jwks_file " + path + ": skipped " + s);
    }
    if (policy->keys.empty()) file.fail(path + ": no usable key");
  }
  if (node.has("public_key_file")) {
    sdk::ConfigNode file = node["public_key_file"];
    std::string path;
    try {
      policy->keys.push_back(jwt::parsePemPublicKey(auth::readConfigFile(file, 1u << 20, &path)));
    } catch (const std::runtime_error& e) {
      if (dynamic_cast<const sdk::ConfigError*>(&e) != nullptr) throw;
      file.fail(path + ": " + e.what());
    }
  }
  if (node.has("secret") && node.has("secret_file")) {
    node["secret_file"].fail("set 'secret' or 'secret_file', not both");
  }
  std::optional<std::string> secret;
  sdk::ConfigNode secret_node = node["secret"];
  if (node.has("secret")) secret = secret_node.asString();
  if (node.has("secret_file")) {
    secret_node = node["secret_file"];
    secret = auth::readConfigFile(secret_node, 64u << 10);
    if (!secret->empty() && secret->back() == '\n') secret->pop_back();
    if (!secret->empty() && secret->back() == '\r') secret->pop_back();
  }
  if (secret) {
    try {
      policy->keys.push_back(jwt::secretKey(std::move(*secret)));
    } catch (const std::runtime_error& e) {
      secret_node.fail(e.what());
    }
  }
  if (policy->keys.empty()) {
    node.fail("no keys: set 'jwks_file', 'public_key_file', 'secret' or 'secret_file'");
  }
  // An allowed algorithm no key can verify is a config mistake (every such token would fail).
  for (jwt::Algorithm alg : policy->algorithms) {
    bool any = std::any_of(policy->keys.begin(), policy->keys.end(),
                           [&](const jwt::Key& k) { return k.allows(alg); });
    if (!any) {
      node["algorithms"].fail(std::string("algorithm ") + jwt::algorithmName(alg) +
                              " is allowed but no configured key can verify it");
    }
  }
}

// The header value of a claim: strings as they are, other JSON compact; nullopt when it cannot go
// in a header or the context.
std::optional<std::string> claimText(const Json& value) {
  std::string text = value.is_string() ? value.get<std::string>()
                                       : value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.empty() || text.size() > kMaxForwardedValue || !sdk::isHeaderValue(text)) {
    return std::nullopt;
  }
  return text;
}

}  // namespace

JwtAuthConfig::JwtAuthConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"algorithms", "jwks_file", "public_key_file", "secret", "secret_file",
                        "issuers", "audiences", "leeway_s", "require_exp", "header", "query_param",
                        "strip_credential", "consumer_claim", "consumer_header", "forward_claims",
                        "realm", "max_token_bytes", "signature_cache_size"});
  if (node.isNull()) node.fail("jwt_auth needs a config: algorithms and keys");
  readAlgorithms(node["algorithms"], &policy);
  readKeys(node, host, &policy);
  if (node.has("issuers")) policy.issuers = nonEmptyList(node["issuers"]);
  if (node.has("audiences")) policy.audiences = nonEmptyList(node["audiences"]);
  policy.leeway_s = node.getInt("leeway_s", 60, 0, 3600);
  policy.require_exp = node.getBool("require_exp", true);
  policy.max_token_bytes = static_cast<size_t>(node.getInt("max_token_bytes", 8192, 256, 65536));
  signature_cache_size =
      static_cast<size_t>(node.getInt("signature_cache_size", 1000, 0, 1'000'000));
  header = auth::headerNameKey(node, "header", header, true);
  bearer = auth::equalsIgnoreCase(header, "Authorization");
  query_param = node.getString("query_param", "");
  if (header.empty() && query_param.empty()) {
    node["header"].fail("no token source: set 'header' or 'query_param'");
  }
  strip_credential = node.getBool("strip_credential", strip_credential);
  consumer_claim = node.getString("consumer_claim", consumer_claim);
  if (consumer_claim.empty()) node["consumer_claim"].fail("empty claim name");
  consumer_header = auth::headerNameKey(node, "consumer_header", consumer_header, true);
  if (!consumer_header.empty() && auth::equalsIgnoreCase(consumer_header, header)) {
    node["consumer_header"].fail("consumer_header must differ from header");
  }
  if (!header.empty()) header_name = sdk::HeaderName(host, header);
  if (!consumer_header.empty()) consumer_header_name = sdk::HeaderName(host, consumer_header);
  if (node.has("forward_claims")) {
    sdk::ConfigNode list = node["forward_claims"];
    if (!list.isSequence()) list.fail("expected a list of {claim, header}");
    for (size_t i = 0; i < list.size(); ++i) {
      sdk::ConfigNode entry = list.at(i);
      if (!entry.isMap()) entry.fail("expected a map {claim, header}");
      entry.requireOnlyKeys({"claim", "header"});
      if (!entry.has("claim")) entry.fail("missing 'claim'");
      ForwardClaim fc;
      fc.claim = entry["claim"].asString();
      // The context key is "jwt.<claim>": 1..64 of [A-Za-z0-9_.-].
      if (fc.claim.empty() || fc.claim.size() > 60 || !isContextKeyChars(fc.claim)) {
        entry["claim"].fail("claim names are 1..60 of [A-Za-z0-9_.-] (context key jwt.<claim>)");
      }
      fc.header = auth::headerNameKey(entry, "header", "", true);
      if (!fc.header.empty() && (auth::equalsIgnoreCase(fc.header, header) ||
                                 auth::equalsIgnoreCase(fc.header, consumer_header))) {
        entry["header"].fail("a claim header must differ from the token and consumer headers");
      }
      if (!fc.header.empty()) fc.header_name = sdk::HeaderName(host, fc.header);
      forward_claims.push_back(std::move(fc));
    }
  }
  realm = node.getString("realm", "");
  for (char c : realm) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      node["realm"].fail("realm with a control character");
    }
  }
  counters = auth::DecisionCounters(
      host, {"missing token", "token too large", "malformed token", "unsupported algorithm",
             "unknown key id", "bad signature", "token expired", "token not yet valid",
             "missing exp", "invalid issuer", "invalid audience"});
}

sdk::FilterStatus JwtAuthFilter::refuse(sdk::Stream& stream, const std::string& reason,
                                        bool missing) {
  std::string challenge = "Bearer";
  if (!config_.realm.empty()) challenge += " realm=\"" + auth::quoteEscape(config_.realm) + "\"";
  if (!missing) {
    challenge += config_.realm.empty() ? " " : ", ";
    challenge += "error=\"invalid_token\", error_description=\"" + reason + "\"";
  }
  config_.counters.denied(reason);
  return auth::replyUnauthorized(stream, reason, challenge);
}

sdk::FilterStatus JwtAuthFilter::onRequestHeaders(sdk::Stream& stream, bool end_stream) {
  // The upstream must never see identity headers the client wrote (by the names resolved at
  // config load: no lookup of them per request).
  if (!config_.consumer_header.empty()) {
    stream.removeHeader(sdk::HeaderMap::kRequest, config_.consumer_header_name);
  }
  for (const auto& fc : config_.forward_claims) {
    if (!fc.header.empty()) stream.removeHeader(sdk::HeaderMap::kRequest, fc.header_name);
  }

  std::optional<std::string> token;
  bool from_query = false;
  if (!config_.header.empty()) {
    auto value = stream.header(sdk::HeaderMap::kRequest, config_.header_name);
    if (value) {
      if (stream.header(sdk::HeaderMap::kRequest, config_.header_name, 1)) {
        return refuse(stream, "malformed token", false);
      }
      std::string_view v = *value;
      if (config_.bearer) {
        // RFC 6750 §2.1: "Bearer" 1*SP b64token; another scheme is not our credential.
        size_t sp = v.find(' ');
        if (sp != std::string_view::npos && auth::equalsIgnoreCase(v.substr(0, sp), "bearer")) {
          v.remove_prefix(sp);
          while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
          token = std::string(v);
        } else if (auth::equalsIgnoreCase(v, "bearer")) {
          token = std::string();
        }
      } else {
        token = std::string(v);
      }
    }
  }
  if (!token && !config_.query_param.empty()) {
    auth::QueryValue q = auth::queryParam(stream.path(), config_.query_param);
    if (q.present) {
      if (q.malformed) return refuse(stream, "malformed token", false);
      token = std::move(q.value);
      from_query = true;
    }
  }
  if (!token) return refuse(stream, "missing token", true);
  if (token->empty()) return refuse(stream, "malformed token", false);

  Json claims;
  double now_s = static_cast<double>(stream.startTimeUnixUs()) / 1e6;
  std::string reason =
      jwt::verifyToken(*token, config_.policy, now_s, &claims,
                       config_.signature_cache_size > 0 ? &worker_.cache : nullptr);
  if (!reason.empty()) return refuse(stream, reason, false);

  config_.counters.allowed();
  // Neither in a header nor in the request line (see api_key_auth).
  if (!auth::stripCredential(stream, config_.strip_credential, config_.header_name, from_query,
                             config_.query_param)) {
    return sdk::FilterStatus::kError;
  }
  std::string consumer;
  if (auto c = claims.find(config_.consumer_claim); c != claims.end() && c->is_string()) {
    if (std::optional<std::string> text = claimText(*c)) consumer = std::move(*text);
  }
  auth::setConsumer(stream, consumer, "jwt", config_.consumer_header_name);
  for (const auto& fc : config_.forward_claims) {
    auto c = claims.find(fc.claim);
    if (c == claims.end()) continue;
    std::optional<std::string> text = claimText(*c);
    if (!text) continue;
    stream.setContext("jwt." + fc.claim, *text);
    if (!fc.header.empty()) stream.setHeader(sdk::HeaderMap::kRequest, fc.header_name, *text);
  }
  return sdk::FilterStatus::kContinue;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN_WITH_WORKER("jwt_auth", "1.0.0", sluice::filters::JwtAuthConfig,
                                 sluice::filters::JwtAuthWorker, sluice::filters::JwtAuthFilter)
