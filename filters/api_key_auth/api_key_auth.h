// api_key_auth — admits a request that carries a known API key, names its consumer, refuses the
// rest with 401.
//
// The key is read from a request header (default X-Api-Key) and, when `query_param` is set and
// the header is absent, from that query parameter (percent-decoded, '+' as space). Keys are
// looked up in a hash table by SipHash-2-4 under a random 128-bit secret drawn at each config
// load, and a match is confirmed in constant time over the whole key (auth::constantTimeEqualBytes,
// eight bytes per step where CRYPTO_memcmp compares one), so neither the lookup nor
// the comparison takes time that depends on how much of a key an attacker guessed right (without
// the secret, nobody can tell or steer which bucket a guess lands in, and a guess reaches the
// comparison only when its keyed hash equals a real key's). This replaced a SHA-256 per request
// (~165 ns; the SipHash of a short key is ~20 ns).
//
// On success: context `consumer` = the key's consumer and `auth.method` = `api_key`; the
// consumer is forwarded in `consumer_header` (every incoming copy of that header is removed
// first, on every request, so a client cannot forge it); when `strip_credential` is on (the
// default) the key header is removed before forwarding, and a key that came from the query
// parameter is removed from the request target sent upstream (every parameter of that name; the
// others keep their bytes and order; Stream::setUpstreamPath). The access log keeps the client's
// target.
//
// On failure: 401, Content-Type application/json, body
//   {"error":"unauthorized","reason":"missing api key"}  (no header, no parameter)
//   {"error":"unauthorized","reason":"invalid api key"}  (unknown, several key fields, bad %)
// plus `WWW-Authenticate: <www_authenticate>` when that key is set.
//
// Metrics: sluice_plugin_api_key_auth_allowed_total and
// sluice_plugin_api_key_auth_denied_total{reason="missing_api_key"|"invalid_api_key"}.
//
// YAML:
//   filters:
//     - name: api_key_auth
//       config:
//         header: X-Api-Key          # header carrying the key; "" = do not read a header
//         query_param: api_key       # query parameter carrying the key (default: none)
//         strip_credential: true     # remove the key (header or query parameter) upstream
//         consumer_header: X-Consumer  # forward the consumer name; "" = do not
//         www_authenticate: 'ApiKey realm="api"'  # WWW-Authenticate of the 401 (default none)
//         keys:                      # inline keys
//           - {key: "k-123", consumer: alice}
//         keys_file: api-keys        # relative to the config file's directory, or absolute;
//                                    # read at load; a reload re-reads it and rebuilds the filter
//                                    # when its content changed (even with the YAML unchanged)
//
// keys_file format: one key a line, `<consumer> <key>` separated by spaces or tabs; blank lines
// and lines starting with '#' are ignored; the key is the rest of the line after the consumer
// and its separating whitespace, trailing whitespace removed (so keys cannot contain spaces
// at either end). Consumer names: 1..256 bytes, no whitespace or control characters.
// Refused at load, with the line: empty keys, duplicate keys (across inline keys and the file),
// lines without a key, keys longer than 4096 bytes, and a config with no key at all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "filters/auth_common/auth_common.h"

namespace sluice::filters {

// Immutable after construction (main thread); read by every worker.
struct ApiKeyAuthConfig {
  ApiKeyAuthConfig(const sdk::ConfigNode& node, const sdk::Host& host);

  // The consumer of `key`, or nullptr. Constant time in the key's contents (see above).
  const std::string* find(std::string_view key) const;

  std::string header = "X-Api-Key";
  std::string query_param;  // "" = none
  bool strip_credential = true;
  std::string consumer_header = "X-Consumer";
  std::string www_authenticate;  // "" = no WWW-Authenticate
  // `header` and `consumer_header` resolved by the host once (ABI 1.4); empty when unset.
  sdk::HeaderName header_name, consumer_header_name;
  auth::DecisionCounters counters;

  // Adds `key` → `consumer`; false when the key is there already.
  bool add(std::string_view key, std::string_view consumer);
  bool empty() const { return keys_.empty(); }

 private:
  struct Entry {
    std::string key;
    std::string consumer;
  };
  uint64_t sip_k0_ = 0;  // the SipHash secret of this config instance
  uint64_t sip_k1_ = 0;
  // SipHash(key) → the keys with that hash (one, but for a 2^-64 chance).
  std::unordered_map<uint64_t, std::vector<Entry>> keys_;
};

// Per request.
class ApiKeyAuthFilter : public sdk::Filter {
 public:
  // Nothing per request: one object per worker (the SDK makes none per request).
  static constexpr bool kPerWorker = true;
  explicit ApiKeyAuthFilter(const ApiKeyAuthConfig& config) : config_(config) {}
  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;

 private:
  // Removes every incoming copy of consumer_header (when set).
  void removeConsumerHeader(sdk::Stream& stream) const;

  const ApiKeyAuthConfig& config_;
};

}  // namespace sluice::filters
