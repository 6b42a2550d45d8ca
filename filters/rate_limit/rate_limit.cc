#include "filters/rate_limit/rate_limit.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>

namespace sluice::filters::rate_limit {
namespace {

// Bodies in the gateway's own error format (core/proxy/local_reply.cc).
constexpr char kLimitedBody[] =
    "{\"status\":429,\"error\":\"Too Many Requests\",\"detail\":\"rate limit exceeded\"}\n";
constexpr char kMissingBody[] =
    "{\"status\":429,\"error\":\"Too Many Requests\",\"detail\":\"rate limit key missing\"}\n";

constexpr double kMaxTolerance = 4.0e18;  // burst * interval in ns stays below 2^62

bool isPolicyName(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

KeyPart parsePart(const sdk::ConfigNode& n) {
  KeyPart part;
  if (n.isMap()) {
    n.requireOnlyKeys({"header"});
    if (!n.has("header")) n.fail("expected {header: NAME}");
    part.kind = KeyPart::Kind::kHeader;
    part.header = n["header"].asString();
    if (std::string problem = sdk::headerNameProblem(part.header); !problem.empty()) {
      n["header"].fail(problem);
    }
    return part;
  }
  std::string s = n.isScalar() ? std::string(n.scalar()) : std::string();
  if (s == "client_ip") {
    part.kind = KeyPart::Kind::kClientIp;
  } else if (s == "consumer") {
    part.kind = KeyPart::Kind::kConsumer;
  } else if (s == "route") {
    part.kind = KeyPart::Kind::kRoute;
  } else if (s == "cluster") {
    part.kind = KeyPart::Kind::kCluster;
  } else if (s == "listener") {
    part.kind = KeyPart::Kind::kListener;
  } else {
    n.fail("expected client_ip, consumer, route, cluster, listener or {header: NAME}");
  }
  return part;
}

std::string describe(const std::vector<KeyPart>& key) {
  static const char* kNames[] = {"client_ip", "header", "consumer", "route", "cluster", "listener"};
  std::string out;
  for (const KeyPart& p : key) {
    out += (out.empty() ? "" : "+") + std::string(kNames[static_cast<int>(p.kind)]);
    if (p.kind == KeyPart::Kind::kHeader) {
      std::string lower = p.header;
      for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      out += "(" + lower + ")";
    }
  }
  return out;
}

uint64_t ceilSeconds(uint64_t ns) { return (ns + 999999999ull) / 1000000000ull; }

}  // namespace

std::string clientIp(std::string_view address, int ipv6_prefix) {
  std::string_view host = address;
  if (!host.empty() && host.front() == '[') {
    size_t close = host.find(']');
    host = close == std::string_view::npos ? host.substr(1) : host.substr(1, close - 1);
  } else if (size_t colon = host.find(':'); colon != std::string_view::npos &&
                                            host.find(':', colon + 1) == std::string_view::npos) {
    host = host.substr(0, colon);  // IPv4 with a port
  }
  if (host.find(':') == std::string_view::npos) return std::string(host);
  std::string text(host);
  in6_addr a{};
  if (::inet_pton(AF_INET6, text.c_str(), &a) != 1) return text;
  static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kMapped, kMapped + 12, a.s6_addr)) {
    char v4[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, a.s6_addr + 12, v4, sizeof(v4)) != nullptr) return v4;
  }
  if (ipv6_prefix >= 128) {
    char v6[INET6_ADDRSTRLEN];
    // Canonical text (RFC 5952), so two spellings of one address share a bucket.
    return ::inet_ntop(AF_INET6, &a, v6, sizeof(v6)) != nullptr ? std::string(v6) : text;
  }
  for (int bit = ipv6_prefix; bit < 128; ++bit) {
    a.s6_addr[bit / 8] &= static_cast<unsigned char>(~(0x80u >> (bit % 8)));
  }
  char v6[INET6_ADDRSTRLEN];
  if (::inet_ntop(AF_INET6, &a, v6, sizeof(v6)) == nullptr) return text;
  return std::string(v6) + "/" + std::to_string(ipv6_prefix);
}

std::shared_ptr<GcraTable> sharedTable(const std::string& identity, uint64_t interval_ns,
                                       uint64_t burst, size_t max_keys) {
  // Lives in this .so; kept while any config instance (old or new snapshot) holds the table.
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<GcraTable>> tables;
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = tables.begin(); it != tables.end();) {
    it = it->second.expired() ? tables.erase(it) : std::next(it);
  }
  std::weak_ptr<GcraTable>& slot = tables[identity];
  if (auto existing = slot.lock()) return existing;
  auto table = std::make_shared<GcraTable>(interval_ns, burst, max_keys);
  slot = table;
  return table;
}

RateLimitConfig::RateLimitConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"rate", "per", "burst", "key", "missing_key", "max_keys", "ipv6_prefix",
                        "policy", "headers_on_success"});
  if (!node.has("rate")) node.fail("'rate' is required (tokens per second, minute or hour)");
  rate = node["rate"].asDouble();
  if (!(rate > 0) || !std::isfinite(rate)) node["rate"].fail("expected a number > 0");
  std::string per = node.getString("per", "second");
  if (per == "second") {
    per_seconds = 1;
  } else if (per == "minute") {
    per_seconds = 60;
  } else if (per == "hour") {
    per_seconds = 3600;
  } else {
    node["per"].fail("expected second, minute or hour");
  }
  const double interval = 1e9 * static_cast<double>(per_seconds) / rate;
  if (interval < 1) node["rate"].fail("at most 1e9 tokens per second");
  interval_ns = static_cast<uint64_t>(std::llround(interval));
  burst = static_cast<uint64_t>(
      node.getInt("burst", static_cast<int64_t>(std::ceil(rate)), 1, 1000000000));
  if (static_cast<double>(burst) * static_cast<double>(interval_ns) > kMaxTolerance) {
    (node.has("burst") ? node["burst"] : node["rate"])
        .fail("burst / rate is too long a period (at most ~126 years)");
  }

  sdk::ConfigNode key_node = node["key"];
  if (key_node.isNull()) {
    key.push_back(KeyPart{});
  } else if (key_node.isSequence()) {
    if (key_node.size() == 0) key_node.fail("expected at least one key part");
    for (size_t i = 0; i < key_node.size(); ++i) key.push_back(parsePart(key_node.at(i)));
  } else {
    key.push_back(parsePart(key_node));
  }

  std::string missing_mode = node.getString("missing_key", "shared");
  if (missing_mode == "shared") {
    missing_key = MissingKey::kShared;
  } else if (missing_mode == "allow") {
    missing_key = MissingKey::kAllow;
  } else if (missing_mode == "deny") {
    missing_key = MissingKey::kDeny;
  } else {
    node["missing_key"].fail("expected shared, allow or deny");
  }
  max_keys = static_cast<uint64_t>(node.getInt("max_keys", 100000, 1, 10000000));
  ipv6_prefix = static_cast<int>(node.getInt("ipv6_prefix", 128, 1, 128));
  policy = node.getString("policy", policy);
  if (!isPolicyName(policy)) {
    node["policy"].fail("expected 1..64 characters of A-Z a-z 0-9 _ . -");
  }
  headers_on_success = node.getBool("headers_on_success", headers_on_success);

  // RateLimit-Policy: the sustained rate as q per w seconds, with the smallest window (a
  // multiple k of `per`, k <= 3600) that makes q a whole number within 0.1% (0.5/s -> q=1;w=2,
  // 0.3333/s -> q=1;w=3); when none does, the k that comes closest.
  uint64_t w = per_seconds;
  double q = 1;
  double best_error = -1;
  for (uint64_t k = 1; k <= 3600; ++k) {
    const double exact = rate * static_cast<double>(k);
    const double whole = std::round(exact);
    if (whole < 1) continue;
    const double error = std::fabs(whole - exact) / exact;
    if (best_error < 0 || error < best_error) {
      best_error = error;
      w = per_seconds * k;
      q = whole;
    }
    if (error < 1e-3) break;
  }
  policy_header = "\"" + policy + "\";q=" + std::to_string(static_cast<uint64_t>(q)) +
                  ";w=" + std::to_string(w);

  std::string identity = policy + "|" + describe(key) + "|v6/" + std::to_string(ipv6_prefix) + "|" +
                         std::to_string(interval_ns) + "ns|" + std::to_string(burst) + "|" +
                         std::to_string(max_keys);
  table = sharedTable(identity, interval_ns, burst, static_cast<size_t>(max_keys));

  for (KeyPart& part : key) {
    if (part.kind == KeyPart::Kind::kHeader) part.header_name = sdk::HeaderName(host, part.header);
  }
  policy_name = sdk::HeaderName(host, "RateLimit-Policy");
  limit_name = sdk::HeaderName(host, "RateLimit");

  sdk::Metrics metrics(host);
  admitted = metrics.counter("requests_total", "Requests through a rate_limit entry.",
                             {{"policy", policy}, {"result", "admitted"}});
  limited = metrics.counter("requests_total", "Requests through a rate_limit entry.",
                            {{"policy", policy}, {"result", "limited"}});
  missing = metrics.counter("requests_total", "Requests through a rate_limit entry.",
                            {{"policy", policy}, {"result", "missing_key"}});
}

std::string_view RateLimitConfig::partValue(const KeyPart& part, const sdk::Stream& stream,
                                            std::string* ip) const {
  switch (part.kind) {
    case KeyPart::Kind::kClientIp:
      *ip = clientIp(stream.clientAddress(), ipv6_prefix);
      return *ip;
    case KeyPart::Kind::kHeader:
      return stream.requestHeader(part.header_name).value_or(std::string_view());
    case KeyPart::Kind::kConsumer:
      return stream.context("consumer").value_or(std::string_view());
    case KeyPart::Kind::kRoute:
      return stream.routeName();
    case KeyPart::Kind::kCluster:
      return stream.clusterName();
    case KeyPart::Kind::kListener:
      return stream.listenerName();
  }
  return {};
}

RateLimitWorker::RateLimitWorker(const RateLimitConfig& config)
    : config_(config),
      values_(config.key.size()),
      ips_(config.key.size()),
      last_(config.key.size()),
      shared_fp_(config.table->fingerprint("")) {}

bool RateLimitWorker::fingerprintOf(const sdk::Stream& stream, uint64_t* fp) {
  const size_t n = config_.key.size();
  bool same = has_last_;
  for (size_t i = 0; i < n; ++i) {
    const std::string_view v = config_.partValue(config_.key[i], stream, &ips_[i]);
    if (v.empty()) return false;
    values_[i] = v;
    same = same && v == last_[i];
  }
  if (!same) {
    key_.clear();
    for (size_t i = 0; i < n; ++i) {
      char length[24];
      const auto done = std::to_chars(length, length + sizeof(length), values_[i].size());
      key_.append(length, static_cast<size_t>(done.ptr - length));
      key_.push_back(':');
      key_.append(values_[i]);
      last_[i].assign(values_[i].data(), values_[i].size());
    }
    last_fp_ = config_.table->fingerprint(key_);
    has_last_ = true;
  }
  *fp = last_fp_;
  return true;
}

std::string RateLimitConfig::limitHeader(const Decision& d) const {
  return "\"" + policy + "\";r=" + std::to_string(d.remaining) +
         ";t=" + std::to_string(ceilSeconds(d.reset_ns));
}

sdk::FilterStatus RateLimitFilter::onRequestHeaders(sdk::Stream& stream, bool /*end_stream*/) {
  uint64_t fp = 0;
  if (!worker_.fingerprintOf(stream, &fp)) {
    config_.missing.inc();
    switch (config_.missing_key) {
      case MissingKey::kAllow:
        return sdk::FilterStatus::kContinue;
      case MissingKey::kDeny:
        stream.sendLocalReply(429, kMissingBody, "application/json",
                              {{"RateLimit-Policy", config_.policy_header}});
        return sdk::FilterStatus::kStop;
      case MissingKey::kShared:
        fp = worker_.sharedFingerprint();
        break;
    }
  }
  decision_ = config_.table->admitFingerprint(fp, GcraTable::nowNs());
  if (!decision_.admitted) {
    config_.limited.inc();
    const std::string retry =
        std::to_string(std::max<uint64_t>(1, ceilSeconds(decision_.retry_after_ns)));
    const std::string limit = config_.limitHeader(decision_);
    stream.sendLocalReply(429, kLimitedBody, "application/json",
                          {{"Retry-After", retry},
                           {"RateLimit-Policy", config_.policy_header},
                           {"RateLimit", limit}});
    return sdk::FilterStatus::kStop;
  }
  config_.admitted.inc();
  limited_ = true;
  return sdk::FilterStatus::kContinue;
}

sdk::FilterStatus RateLimitFilter::onResponseHeaders(sdk::Stream& stream, bool /*end_stream*/) {
  if (config_.headers_on_success && limited_) {
    // Added, not set: several rate_limit entries each contribute one list member.
    stream.addHeader(sdk::HeaderMap::kResponse, config_.policy_name, config_.policy_header);
    stream.addHeader(sdk::HeaderMap::kResponse, config_.limit_name, config_.limitHeader(decision_));
  }
  return sdk::FilterStatus::kContinue;
}

}  // namespace sluice::filters::rate_limit

SLUICE_FILTER_PLUGIN_WITH_WORKER("rate_limit", "1.0.0",
                                 sluice::filters::rate_limit::RateLimitConfig,
                                 sluice::filters::rate_limit::RateLimitWorker,
                                 sluice::filters::rate_limit::RateLimitFilter)
