// JWS compact serialization (RFC 7515 §7.1) verification and JWT claim checks (RFC 7519 §4.1)
// for jwt_auth. Pure functions over immutable inputs: any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "filters/auth_common/auth_common.h"
#include "filters/jwt_auth/jwt_keys.h"

namespace sluice::filters::jwt {

// What a token is checked against (from the filter's config).
struct Policy {
  std::vector<Algorithm> algorithms;  // allow-list; never empty, never "none"
  std::vector<Key> keys;
  std::vector<std::string> issuers;    // empty: `iss` not checked
  std::vector<std::string> audiences;  // empty: `aud` not checked
  int64_t leeway_s = 60;               // allowed clock skew for exp and nbf
  bool require_exp = true;
  size_t max_token_bytes = 8192;
};

// Deepest nesting of arrays/objects accepted in the JOSE header and the claims.
inline constexpr int kMaxJsonDepth = 16;

// Parses JSON text into an object, refusing nesting deeper than kMaxJsonDepth, duplicate member
// names (RFC 7515 §5.2 lets a parser take the last one; refusing removes the ambiguity between
// this filter and an upstream reading the same token) and anything but an object at the top.
// False when refused.
bool parseJsonObject(std::string_view text, nlohmann::json* out);

// One worker's memory of tokens whose signature verified, by SHA-256 of the whole token string:
// a client sending the same token again costs no RSA or ECDSA operation (tens of µs). Only the
// signature is remembered — header checks and every claim (exp, nbf, iss, aud) run on each
// request — and only for one config instance (its keys never change). An entry leaves at the
// token's exp plus leeway (or 5 minutes after it was added when the token has no exp); when
// `max_entries` are held, expired entries are dropped, and if none was, all. Worker thread only.
class SignatureCache {
 public:
  explicit SignatureCache(size_t max_entries) : max_entries_(max_entries) {}
  bool contains(const auth::Digest& token, double now_s) const;
  void add(const auth::Digest& token, double expires_s, double now_s);
  size_t size() const { return entries_.size(); }
  uint64_t signatureChecks() const { return signature_checks_; }
  void countSignatureCheck() { ++signature_checks_; }

 private:
  size_t max_entries_;
  std::unordered_map<auth::Digest, double, auth::DigestHash> entries_;  // → expires (Unix s)
  uint64_t signature_checks_ = 0;
};

// Verifies `token` (compact JWS) at time `now_s` (seconds since the Unix epoch). Returns "" and
// sets `claims` when the token is valid; else one of the reasons below, which name what failed
// and nothing of the token or the keys (they go into the 401 body and WWW-Authenticate):
//   "token too large", "malformed token" (not three base64url parts, bad JSON, a "crit" header,
//   exp/nbf not numbers), "unsupported algorithm" (alg not in the allow-list, including "none"),
//   "unknown key id" (no key for the kid, or none of the alg's type), "bad signature",
//   "token expired", "token not yet valid", "missing exp", "invalid issuer", "invalid audience".
// With `cache` (may be null), a token whose signature verified before skips the signature
// check, and a newly valid token is remembered.
std::string verifyToken(std::string_view token, const Policy& policy, double now_s,
                        nlohmann::json* claims, SignatureCache* cache = nullptr);

// Signature check of `signing_input` with one key (exposed for tests).
bool verifySignature(Algorithm alg, const Key& key, std::string_view signing_input,
                     std::string_view signature);

}  // namespace sluice::filters::jwt
