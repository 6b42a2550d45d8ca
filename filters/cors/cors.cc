#include "filters/cors/cors.h"

namespace sluice::filters {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool isToken(std::string_view s) { return sdk::isHeaderName(s); }  // same grammar (RFC 9110 §5.6.2)

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string forbidden(std::string_view detail) {
  // `detail` is made of validated tokens only (a method or header name), nothing to escape.
  return "{\"status\":403,\"error\":\"Forbidden\",\"detail\":\"" + std::string(detail) + "\"}\n";
}

// A list key: a sequence of tokens (or one scalar), each checked with `isToken`.
std::vector<std::string> readTokens(const sdk::ConfigNode& node, const char* what) {
  std::vector<std::string> out;
  if (node.isNull()) return out;
  size_t n = node.isSequence() ? node.size() : 1;
  for (size_t i = 0; i < n; ++i) {
    sdk::ConfigNode item = node.isSequence() ? node.at(i) : node;
    std::string v = item.asString();
    if (v != "*" && !isToken(v)) item.fail("'" + v + "' is not " + what);
    out.push_back(v);
  }
  return out;
}

}  // namespace

CorsConfig::CorsConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"allow_origins", "allow_origin_regex", "allow_methods", "allow_headers",
                        "expose_headers", "max_age", "allow_credentials", "reflect_any_origin"});
  allow_credentials = node.getBool("allow_credentials", false);
  reflect_any_origin = node.getBool("reflect_any_origin", false);

  sdk::ConfigNode origins_node = node["allow_origins"];
  bool star = false;
  std::vector<std::string> list =
      origins_node.isNull() ? std::vector<std::string>{} : origins_node.asStringList();
  for (size_t i = 0; i < list.size(); ++i) {
    sdk::ConfigNode item = origins_node.isSequence() ? origins_node.at(i) : origins_node;
    std::string why;
    if (!origins.addEntry(list[i], &why)) item.fail(why);
    star = star || list[i] == "*";
    if (star && allow_credentials) {
      item.fail(
          "allow_origins '*' with allow_credentials: the Fetch standard forbids "
          "Access-Control-Allow-Origin: * on credentialed requests (list the origins, or set "
          "reflect_any_origin: true to echo every origin deliberately)");
    }
  }
  sdk::ConfigNode regex_node = node["allow_origin_regex"];
  if (!regex_node.isNull()) {
    std::vector<std::string> patterns = regex_node.asStringList();
    for (size_t i = 0; i < patterns.size(); ++i) {
      std::string why;
      if (!origins.addRegex(patterns[i], &why)) {
        (regex_node.isSequence() ? regex_node.at(i) : regex_node).fail(why);
      }
    }
  }
  if (reflect_any_origin && !origins.empty()) {
    node["reflect_any_origin"].fail(
        "reflect_any_origin allows every origin: drop allow_origins and allow_origin_regex");
  }
  if (!reflect_any_origin && origins.empty()) {
    node.fail("cors needs allow_origins, allow_origin_regex or reflect_any_origin");
  }

  if (node.has("allow_methods")) {
    allow_methods = readTokens(node["allow_methods"], "an HTTP method");
  }
  for (const std::string& m : allow_methods) any_method = any_method || m == "*";
  allow_methods_value = join(allow_methods);

  for (const std::string& h : readTokens(node["allow_headers"], "a header name")) {
    if (h == "*") {
      any_header = true;
    } else {
      allow_headers.push_back(lower(h));
    }
  }
  std::vector<std::string> expose = readTokens(node["expose_headers"], "a header name");
  for (const std::string& h : expose) {
    if (h == "*" && allow_credentials) {
      node["expose_headers"].fail(
          "expose_headers '*' with allow_credentials means a header literally named '*' (Fetch "
          "standard): list the headers");
    }
  }
  expose_headers = join(expose);
  if (node.has("max_age")) {
    max_age = static_cast<uint32_t>(node.getInt("max_age", 0, 0, 86400));
  }
}

std::optional<std::string> CorsConfig::allowOrigin(std::string_view origin) const {
  if (reflect_any_origin) return std::string(origin);
  // "*" is never combined with credentials (refused at load), and makes other entries moot.
  if (origins.allowsAny()) return std::string("*");
  if (origins.matchesSpecific(origin)) return std::string(origin);
  return std::nullopt;
}

bool CorsConfig::methodAllowed(std::string_view method) const {
  if (any_method) return true;
  for (const std::string& m : allow_methods) {
    if (m == method) return true;  // methods are case-sensitive (RFC 9110 §9.1)
  }
  return false;
}

bool CorsConfig::headerAllowed(std::string_view lowercase_name) const {
  if (any_header) return true;
  for (const std::string& h : allow_headers) {
    if (h == lowercase_name) return true;
  }
  return false;
}

sdk::FilterStatus CorsFilter::onRequestHeaders(sdk::Stream& stream, bool /*end_stream*/) {
  std::optional<std::string_view> origin = stream.requestHeader("origin");
  if (!origin) return sdk::FilterStatus::kContinue;
  // Two Origin fields: not something a browser sends; not allowed.
  bool single = !stream.header(sdk::HeaderMap::kRequest, "origin", 1).has_value();
  if (stream.method() == "OPTIONS" && stream.requestHeader("access-control-request-method")) {
    if (!single) {
      stream.sendLocalReply(403, forbidden("origin not allowed"), "application/json",
                            {{"Vary", "Origin"}});
      return sdk::FilterStatus::kStop;
    }
    return preflight(stream, *origin);
  }
  cors_request_ = true;
  if (single) allow_origin_ = config_.allowOrigin(*origin);
  return sdk::FilterStatus::kContinue;
}

sdk::FilterStatus CorsFilter::preflight(sdk::Stream& stream, std::string_view origin) {
  static constexpr std::string_view kVary =
      "Origin, Access-Control-Request-Method, Access-Control-Request-Headers";
  std::optional<std::string> allow = config_.allowOrigin(origin);
  if (!allow) {
    stream.sendLocalReply(403, forbidden("origin not allowed"), "application/json",
                          {{"Vary", kVary}});
    return sdk::FilterStatus::kStop;
  }
  std::string method(trim(*stream.requestHeader("access-control-request-method")));
  if (!isToken(method) || !config_.methodAllowed(method)) {
    stream.sendLocalReply(403, forbidden("method not allowed"), "application/json",
                          {{"Vary", kVary}});
    return sdk::FilterStatus::kStop;
  }
  // Access-Control-Request-Headers: a comma list of names, possibly in several fields.
  std::string requested;
  for (size_t i = 0;; ++i) {
    std::optional<std::string_view> v =
        stream.header(sdk::HeaderMap::kRequest, "access-control-request-headers", i);
    if (!v) break;
    size_t pos = 0;
    while (pos <= v->size()) {
      size_t comma = v->find(',', pos);
      if (comma == std::string_view::npos) comma = v->size();
      std::string name = lower(trim(v->substr(pos, comma - pos)));
      pos = comma + 1;
      if (name.empty()) continue;
      if (!isToken(name) || !config_.headerAllowed(name)) {
        std::string detail =
            isToken(name) ? "header " + name + " not allowed" : std::string("header not allowed");
        stream.sendLocalReply(403, forbidden(detail), "application/json", {{"Vary", kVary}});
        return sdk::FilterStatus::kStop;
      }
      requested += (requested.empty() ? "" : ", ") + name;
    }
  }
  std::vector<sdk::Header> headers;
  headers.push_back({"Access-Control-Allow-Origin", *allow});
  if (config_.allow_credentials) headers.push_back({"Access-Control-Allow-Credentials", "true"});
  headers.push_back(
      {"Access-Control-Allow-Methods", config_.any_method ? method : config_.allow_methods_value});
  if (!requested.empty()) headers.push_back({"Access-Control-Allow-Headers", requested});
  std::string max_age = config_.max_age ? std::to_string(*config_.max_age) : std::string();
  if (config_.max_age) headers.push_back({"Access-Control-Max-Age", max_age});
  headers.push_back({"Vary", kVary});
  stream.sendLocalReply(204, "", "", headers.data(), headers.size());
  return sdk::FilterStatus::kStop;
}

sdk::FilterStatus CorsFilter::onResponseHeaders(sdk::Stream& stream, bool /*end_stream*/) {
  if (!cors_request_) return sdk::FilterStatus::kContinue;
  using sdk::HeaderMap;
  if (allow_origin_) {
    stream.setHeader(HeaderMap::kResponse, "Access-Control-Allow-Origin", *allow_origin_);
    if (config_.allow_credentials) {
      stream.setHeader(HeaderMap::kResponse, "Access-Control-Allow-Credentials", "true");
    }
    if (!config_.expose_headers.empty()) {
      stream.setHeader(HeaderMap::kResponse, "Access-Control-Expose-Headers",
                       config_.expose_headers);
    }
  }
  if (config_.variesByOrigin()) {
    bool named = false;
    for (size_t i = 0;; ++i) {
      std::optional<std::string_view> v = stream.header(HeaderMap::kResponse, "vary", i);
      if (!v) break;
      size_t pos = 0;
      while (pos <= v->size() && !named) {
        size_t comma = v->find(',', pos);
        if (comma == std::string_view::npos) comma = v->size();
        std::string el = lower(trim(v->substr(pos, comma - pos)));
        named = el == "*" || el == "origin";
        pos = comma + 1;
      }
    }
    if (!named) stream.addHeader(HeaderMap::kResponse, "Vary", "Origin");
  }
  return sdk::FilterStatus::kContinue;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN("cors", "1.0.0", sluice::filters::CorsConfig, sluice::filters::CorsFilter)
