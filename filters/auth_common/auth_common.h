// Helpers shared by the auth filters (api_key_auth, basic_auth, jwt_auth). Not a plugin; linked
// into each one. Everything here is thread-safe (pure functions) unless stated.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/metrics.h"
#include "filters/common/siphash.h"

namespace sluice::filters::auth {

// SHA-256 of `data` (OpenSSL EVP).
using Digest = std::array<uint8_t, 32>;
Digest sha256(std::string_view data);

// For hash tables keyed by digests (the digest's first bytes are already uniform).
struct DigestHash {
  size_t operator()(const Digest& d) const {
    size_t h = 0;
    for (size_t i = 0; i < sizeof(size_t); ++i) h = (h << 8) | d[i];
    return h;
  }
};

// SipHash-2-4 (filters/common/siphash.h).
using filters::sipHash24;
// 128 bits from OpenSSL's CSPRNG (RAND_bytes) for sipHash24; throws std::runtime_error when it
// fails (at config load).
std::pair<uint64_t, uint64_t> randomSipKey();

// Equality of two digests in time independent of their contents (CRYPTO_memcmp).
bool digestEqual(const Digest& a, const Digest& b);
// Equality of two strings in time independent of where they differ and of their lengths: the
// SHA-256 digests of both are compared with CRYPTO_memcmp.
bool constantTimeEqual(std::string_view a, std::string_view b);
// Equality of the `len` bytes at `a` and at `b` in time that depends on `len` only (no exit at
// the first differing byte: like CRYPTO_memcmp, eight bytes per step instead of one).
bool constantTimeEqualBytes(const char* a, const char* b, size_t len);

// Standard base64 (RFC 4648 §4), padded, strict: only the alphabet, length a multiple of 4,
// '=' only as the last one or two characters. nullopt when malformed.
std::optional<std::string> base64Decode(std::string_view in);
// base64url (RFC 4648 §5) without padding, as JOSE uses it (RFC 7515 §2): only [A-Za-z0-9_-],
// no '='; a length of 4n+1 is malformed, and so is a non-canonical encoding (unused bits of the
// last character not zero). nullopt when malformed.
std::optional<std::string> base64UrlDecode(std::string_view in);
// base64url without padding of `in` (tests and tools build tokens with it).
std::string base64UrlEncode(std::string_view in);

// Percent-decoding of one query component (application/x-www-form-urlencoded as browsers send
// it: '+' is a space, %XX any byte). nullopt on a '%' not followed by two hex digits.
std::optional<std::string> percentDecode(std::string_view in);

// The value of the first query parameter called `name` in a request target ("/p?a=1&b=2"),
// percent-decoded; names compare after decoding, exactly (case-sensitive). A parameter without
// '=' has an empty value. The fragment, if any, is ignored.
struct QueryValue {
  bool present = false;    // a parameter with that name exists
  bool malformed = false;  // its value had a bad percent escape (value then empty)
  std::string value;
};
QueryValue queryParam(std::string_view target, std::string_view name);

// ASCII case-insensitive equality (the SDK's).
using sdk::equalsIgnoreCase;

// `value` of a config key naming a file: an absolute path, or one relative to the directory of
// the config file (resolved by the host: ConfigNode::resolvePath). Declares the file to the host
// (ConfigNode::dependsOnFile, before reading it), so a reload rebuilds the filter when the file's
// content changed even if the YAML did not. Returns the file's bytes; *resolved (may be null)
// gets the resolved path. Throws ConfigError at `node` when empty, unreadable (with the reason)
// or larger than `max_bytes`.
std::string readConfigFile(const sdk::ConfigNode& node, size_t max_bytes = 16u << 20,
                           std::string* resolved = nullptr);

// `target` ("/p?a=1&b=2") without every query parameter whose name, percent-decoded, is `name`;
// the other parameters keep their bytes and order; a query left empty loses its '?'. The
// fragment, if any, stays. Returns `target` unchanged when no parameter has that name.
std::string removeQueryParam(std::string_view target, std::string_view name);

// After a credential was read from query parameter `name`: sends the request upstream without
// it (Stream::setUpstreamPath on the routed path). False when the host refused the new path.
bool stripQueryCredential(sdk::Stream& stream, std::string_view name);

// After a credential was accepted, with `strip` on: removes header `header` (when not empty;
// resolved at config load) and, when the credential came from the query (`from_query`), query
// parameter `query_param` (stripQueryCredential). False when the host refused the shortened
// path: the hook then returns kError (failure_mode decides) rather than forward the credential.
bool stripCredential(sdk::Stream& stream, bool strip, const sdk::HeaderName& header,
                     bool from_query, std::string_view query_param);

// A header-name key: absent → `def`; "" allowed when `allow_empty` (meaning "off"); otherwise
// must be a token (RFC 9110 §5.1) of at most 256 bytes (what the host's header_name interns:
// a longer name would give a sdk::HeaderName that matches and sets nothing). Throws ConfigError
// at the node.
std::string headerNameKey(const sdk::ConfigNode& map, const char* key, const std::string& def,
                          bool allow_empty);

// {"error":"unauthorized","reason":"<reason>"} (reason JSON-escaped).
std::string unauthorizedBody(std::string_view reason);
// 401 with that JSON body (application/json) and, when `www_authenticate` is not empty, a
// WWW-Authenticate field. Returns kStop for the hook to return.
sdk::FilterStatus replyUnauthorized(sdk::Stream& stream, std::string_view reason,
                                    std::string_view www_authenticate);

// Escapes `s` for a JSON string or an HTTP quoted-string (RFC 9110 §5.6.4): '"' and '\' get a
// backslash; control characters are dropped.
std::string quoteEscape(std::string_view s);

// The agreed context keys: `consumer` and `auth.method`.
inline constexpr std::string_view kContextConsumer = "consumer";
inline constexpr std::string_view kContextMethod = "auth.method";

// Marks the request as authenticated: context `consumer` = consumer (when not empty) and
// `auth.method` = method; when `header` (resolved at config load) is not empty, appends it to
// the request with `consumer`. Callers must remove incoming copies of `header` before
// authenticating (on every path, refusals included): it is appended, not set.
void setConsumer(sdk::Stream& stream, std::string_view consumer, std::string_view method,
                 const sdk::HeaderName& header);

// The decision counters every auth filter exports: sluice_plugin_<plugin>_allowed_total and
// sluice_plugin_<plugin>_denied_total{reason="<reason, spaces as '_'>"}, one series per reason
// of the fixed list given at construction. Declared in the config constructor (main
// thread); allowed()/denied() from any worker. Does nothing on a host without metrics.
class DecisionCounters {
 public:
  DecisionCounters() = default;
  DecisionCounters(const sdk::Host& host, std::initializer_list<std::string_view> reasons);
  void allowed() const { allowed_.inc(); }
  // `reason` must be one of the constructor's (others are not counted).
  void denied(std::string_view reason) const;

 private:
  sdk::Counter allowed_;
  std::vector<std::pair<std::string, sdk::Counter>> denied_;
};

}  // namespace sluice::filters::auth
