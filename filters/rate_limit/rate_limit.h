// rate_limit — a token bucket per key, shared by every worker of the process; 429 when empty.
//
// YAML (every key optional except `rate`; docs/configuration.md "### rate_limit" has the full
// reference):
//   filters:
//     - name: rate_limit
//       config:
//         rate: 100              # tokens per `per` (a number > 0: 0.5, 100, 2500)
//         per: second            # second | minute | hour
//         burst: 200             # bucket size (integer >= 1); default: rate rounded up
//         key: client_ip         # client_ip | consumer | route | cluster | listener
//                                # | {header: X-Tenant} | a list of these (all must be present)
//         missing_key: shared    # shared (one bucket for every request without the key,
//                                # the default) | allow (not limited) | deny (429)
//         max_keys: 100000       # keys held at once (bounded memory; eviction beyond it)
//         ipv6_prefix: 128       # client_ip of IPv6 clients: limit per /N network (1..128)
//         policy: default        # the policy name in the RateLimit headers; entries with the
//                                # same name and parameters share their buckets
//         headers_on_success: false  # RateLimit headers on admitted responses too
//
// Key values: client_ip is the downstream peer's address without the port (IPv4 dotted, IPv6
// without brackets, an IPv4-mapped IPv6 address as IPv4); consumer is the request context's
// `consumer` (set by an auth filter earlier in the chain); route/cluster/listener are the
// request's attributes; {header: N} the first field N (an empty value counts as missing).
//
// Denied requests: 429 with the gateway's JSON error body, `Retry-After` (RFC 9110 §10.2.3:
// whole seconds, rounded up, >= 1) and `RateLimit-Policy` / `RateLimit` in the structured-field
// syntax of draft-ietf-httpapi-ratelimit-headers-10:
//   RateLimit-Policy: "default";q=100;w=1      the sustained rate: q requests per w seconds
//   RateLimit: "default";r=0;t=2               r tokens left now, t seconds until full again
//
// Threads: the config (and its bucket table) is built on the main thread and shared by every
// worker; buckets are updated with one CAS (gcra.h). Each worker keeps its last key's values and
// fingerprint (RateLimitWorker, its own thread only): nothing of it is shared. Reload: the table
// lives in a process-wide registry keyed by (policy, key spec, rate, burst, max_keys); a new config
// instance with the same identity gets the same table while the old one is still alive (a reload
// keeps buckets). A rebuilt .so (a changed file) is a fresh copy and starts with full buckets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/metrics.h"
#include "filters/rate_limit/gcra.h"

namespace sluice::filters::rate_limit {

// One part of the key.
struct KeyPart {
  enum class Kind { kClientIp, kHeader, kConsumer, kRoute, kCluster, kListener };
  Kind kind = Kind::kClientIp;
  std::string header;  // kHeader only
  sdk::HeaderName header_name;  // `header` resolved by the host (set by RateLimitConfig)
};

enum class MissingKey { kShared, kAllow, kDeny };

// "1.2.3.4:80" -> "1.2.3.4"; "[::1]:80" -> "::1"; "[::ffff:1.2.3.4]:80" -> "1.2.3.4"; IPv6 cut
// to its first `ipv6_prefix` bits ("2001:db8::/64"). An address without a port is kept whole.
std::string clientIp(std::string_view address, int ipv6_prefix);

// The table shared by every config instance with the same identity (see the header comment).
std::shared_ptr<GcraTable> sharedTable(const std::string& identity, uint64_t interval_ns,
                                       uint64_t burst, size_t max_keys);

// Immutable after construction (main thread); read by every worker.
struct RateLimitConfig {
  RateLimitConfig(const sdk::ConfigNode& node, const sdk::Host& host);

  double rate = 0;           // tokens per `per_seconds`
  uint64_t per_seconds = 1;  // 1, 60 or 3600
  uint64_t burst = 0;        // bucket size
  uint64_t interval_ns = 0;  // 1 s / (tokens per second), rounded to the nanosecond
  std::vector<KeyPart> key;  // at least one part
  MissingKey missing_key = MissingKey::kShared;
  uint64_t max_keys = 100000;
  int ipv6_prefix = 128;
  std::string policy = "default";
  bool headers_on_success = false;
  std::string policy_header;  // the RateLimit-Policy value, precomputed
  sdk::HeaderName policy_name, limit_name;  // RateLimit-Policy, RateLimit (ABI 1.4 handles)
  std::shared_ptr<GcraTable> table;
  sdk::Counter admitted, limited, missing;

  // The hooks its streams never need (ABI 1.3): the response hook only adds the RateLimit
  // headers on admitted responses, so without headers_on_success it is left out.
  uint32_t unusedHooks() const { return headers_on_success ? 0 : SLUICE_HOOK_RESPONSE_HEADERS; }

  // The value of `part` for `stream`: a view valid until the request's headers change (a
  // client_ip part is built into *ip); empty when the part is absent.
  std::string_view partValue(const KeyPart& part, const sdk::Stream& stream, std::string* ip) const;
  // The `RateLimit` value for a decision.
  std::string limitHeader(const Decision& d) const;
};

// Per worker, on its thread. A request's key is its parts' values, each length-prefixed
// ("8:consumer" then the next part: no two part lists collide), hashed into the table's
// fingerprint. A worker that sees the same values request after request (one consumer, one
// route) keeps the last ones and their fingerprint: the key is built and hashed only when a
// value differs from the last request's.
class RateLimitWorker {
 public:
  explicit RateLimitWorker(const RateLimitConfig& config);

  // The fingerprint of `stream`'s key, or false when one of its parts is absent.
  bool fingerprintOf(const sdk::Stream& stream, uint64_t* fp);
  // The fingerprint of "", the bucket requests without the key share (missing_key: shared):
  // every real key has a "<length>:" prefix, so "" is nobody's.
  uint64_t sharedFingerprint() const { return shared_fp_; }

 private:
  const RateLimitConfig& config_;         // outlives its workers
  std::vector<std::string_view> values_;  // this request's, per part
  std::vector<std::string> ips_;          // client_ip parts' text (values_ views them)
  std::vector<std::string> last_;         // the last built key's values, per part
  bool has_last_ = false;
  uint64_t last_fp_ = 0;
  uint64_t shared_fp_ = 0;
  std::string key_;  // scratch, its capacity kept
};

// Per request.
class RateLimitFilter : public sdk::Filter {
 public:
  RateLimitFilter(const RateLimitConfig& config, RateLimitWorker& worker)
      : config_(config), worker_(worker) {}

  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;
  sdk::FilterStatus onResponseHeaders(sdk::Stream& stream, bool end_stream) override;

 private:
  const RateLimitConfig& config_;
  RateLimitWorker& worker_;
  bool limited_ = false;  // this request went through the bucket and was admitted
  Decision decision_;
};

}  // namespace sluice::filters::rate_limit
