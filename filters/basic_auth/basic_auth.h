// basic_auth — HTTP Basic authentication (RFC 7617) against an htpasswd file.
//
// The client sends `Authorization: Basic base64(user ":" password)`. The file's hashes are
// verified with libcrypt (see htpasswd.h for the accepted methods); hashes libcrypt cannot
// verify are refused at config load with the file and line. The file is read when the config is
// created and declared to the host (dependsOnFile): a reload re-reads it and rebuilds the filter
// when its content changed, even when the YAML is the same (an unreadable file refuses the
// reload; the running filter keeps serving).
//
// On success: context `consumer` = the user name and `auth.method` = `basic`; the user name is
// forwarded in `consumer_header` (incoming copies of it are removed on every request, so a client
// cannot forge it); the Authorization header is removed before forwarding when
// `strip_credential` is on.
//
// On failure: 401, Content-Type application/json, `WWW-Authenticate: Basic realm="<realm>",
// charset="UTF-8"` (RFC 7617 §2.1), body {"error":"unauthorized","reason":R} with R one of
//   "missing credentials"    no Authorization header, or another scheme than Basic
//   "malformed credentials"  bad base64, no ':' after decoding, several Authorization fields,
//                            a value over 8 KiB (401, not 400: the client is asked to retry)
//   "invalid credentials"    unknown user or wrong password (one reason for both)
// An unknown user's password is still run through crypt (against the file's first hash), so the
// response time does not tell which user names exist.
//
// Verification threads: a password that is not in the cache is verified on one of
// `verify_threads` threads owned by the config (default 2), not on the worker's event loop, which
// would otherwise stall every connection of the worker for the tens of ms a bcrypt takes: the
// request is paused (kPause) and resumed, or answered 401, when the thread posts the result back
// to the request's worker (StreamRef::post). At most `verify_queue` verifications wait (default
// 1024); beyond that the request is answered 503 with Retry-After: 1 and reason "verification
// overloaded". verify_threads: 0 verifies on the worker thread (blocking it).
//
// Verification cache: bcrypt and yescrypt are slow on purpose (tens of ms a verify), which a
// gateway cannot pay on every request of a client that sends the same credentials each time. Each
// worker keeps, per user, a salted SHA-256 of the last password that verified, for `cache_ttl_s`
// (default 60 s; 0 = no cache), at most `cache_max_entries` users (default 10000; when full,
// expired entries are dropped, then an arbitrary one). Only successes are cached: a wrong
// password always costs a crypt call (a client hammering wrong passwords costs a crypt each;
// put rate_limit in front). The file is only read at config load and a reload builds new workers
// with empty caches, so the cache never accepts a password the current file does not: what it
// costs is memory (about 100 bytes a user) and a salted digest of each cached password in the
// worker's memory for cache_ttl_s.
//
// Metrics: sluice_plugin_basic_auth_allowed_total and sluice_plugin_basic_auth_denied_total{
// reason="missing_credentials"|"malformed_credentials"|"invalid_credentials"}.
//
// YAML:
//   filters:
//     - name: basic_auth
//       config:
//         htpasswd_file: htpasswd        # required; relative to the config file's directory
//         realm: sluice                  # the realm of WWW-Authenticate
//         strip_credential: true         # remove Authorization before forwarding
//         consumer_header: X-Consumer    # forward the user name; "" = do not
//         cache_ttl_s: 60                # seconds a verified password is remembered; 0 = never
//         cache_max_entries: 10000       # per worker
//         verify_threads: 2              # crypt threads per config; 0 = on the worker thread
//         verify_queue: 1024             # verifications waiting for a thread; more → 503
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/host.h"
#include "filters/auth_common/auth_common.h"
#include "filters/basic_auth/htpasswd.h"
#include "filters/basic_auth/verify_pool.h"

namespace sluice::filters {

// Immutable after construction (main thread); read by every worker.
struct BasicAuthConfig {
  BasicAuthConfig(const sdk::ConfigNode& node, const sdk::Host& host);

  std::unordered_map<std::string, std::string> users;  // user → crypt hash
  std::string dummy_hash;  // the file's first hash: what an unknown user is verified against
  std::string realm = "sluice";
  std::string www_authenticate;  // built from realm
  bool strip_credential = true;
  std::string consumer_header = "X-Consumer";
  // Authorization and `consumer_header` resolved by the host once (ABI 1.4); the consumer's is
  // empty when unset.
  sdk::HeaderName authorization_name, consumer_header_name;
  uint64_t cache_ttl_us = 60'000'000;
  size_t cache_max_entries = 10000;
  auth::DecisionCounters counters;
  // Null with verify_threads: 0. Thread-safe (submit); owned here so it outlives every request.
  std::unique_ptr<basic_auth::VerifyPool> pool;
};

// Decodes `Authorization: Basic <base64>` into user and password. Returns "" on success, else the
// 401 reason ("missing credentials" or "malformed credentials").
std::string parseBasicCredentials(std::string_view authorization, std::string* user,
                                  std::string* password);

// Per worker: libcrypt scratch space and the verification cache. Worker thread only.
class BasicAuthWorker {
 public:
  explicit BasicAuthWorker(const BasicAuthConfig& config);

  // What a request needs once its credentials are parsed.
  struct Lookup {
    bool cached = false;                // the cache says yes: no crypt needed
    bool known = false;                 // the user exists
    const std::string* hash = nullptr;  // what to verify against (the dummy for unknown users)
    auth::Digest digest{};              // cache key material of (user, password)
  };
  Lookup lookup(const std::string& user, std::string_view password, uint64_t now_us);
  // Records a verified password (no-op when the cache is off).
  void remember(const std::string& user, const auth::Digest& digest, uint64_t now_us);
  // Verifies on this thread (verify_threads: 0).
  bool verifyHere(std::string_view password, const std::string& hash) {
    ++crypt_calls_;
    return verifier_.verify(password, hash);
  }
  void countCrypt() { ++crypt_calls_; }
  // lookup + verify + remember on this thread: true when `password` is `user`'s.
  bool check(const std::string& user, std::string_view password, uint64_t now_us);

  size_t cacheSize() const { return cache_.size(); }
  uint64_t cryptCalls() const { return crypt_calls_; }

 private:
  struct Entry {
    auth::Digest digest;  // SHA-256(salt_ || user || '\0' || password)
    uint64_t expires_us;
  };
  auth::Digest digestOf(const std::string& user, std::string_view password) const;

  const BasicAuthConfig& config_;
  basic_auth::Verifier verifier_;
  std::array<uint8_t, 32> salt_{};  // random per worker: the cache holds no plain password hash
  std::unordered_map<std::string, Entry> cache_;
  uint64_t crypt_calls_ = 0;
};

// Per request.
class BasicAuthFilter : public sdk::Filter {
 public:
  BasicAuthFilter(const BasicAuthConfig& config, BasicAuthWorker& worker)
      : config_(config), worker_(worker) {}
  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;

 private:
  // The outcome of a verification, on the worker thread (inline, or posted back from the pool).
  // Returns kContinue or kStop (the 401 was sent). `digest` (when not null) goes in the cache on
  // success: a crypt verified it.
  sdk::FilterStatus finish(sdk::Stream& stream, bool ok, const std::string& user,
                           const auth::Digest* digest);

  const BasicAuthConfig& config_;
  BasicAuthWorker& worker_;
};

}  // namespace sluice::filters
