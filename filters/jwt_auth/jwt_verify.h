// JWS compact serialization (RFC 7515 §7.1) verification and JWT claim checks (RFC 7519 §4.1)
// for jwt_auth. Pure functions over immutable inputs: any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

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

// Verifies `token` (compact JWS) at time `now_s` (seconds since the Unix epoch). Returns "" and
// sets `claims` when the token is valid; else one of the reasons below, which name what failed
// and nothing of the token or the keys (they go into the 401 body and WWW-Authenticate):
//   "token too large", "malformed token" (not three base64url parts, bad JSON, a "crit" header,
//   exp/nbf not numbers), "unsupported algorithm" (alg not in the allow-list, including "none"),
//   "unknown key id" (no key for the kid, or none of the alg's type), "bad signature",
//   "token expired", "token not yet valid", "missing exp", "invalid issuer", "invalid audience".
std::string verifyToken(std::string_view token, const Policy& policy, double now_s,
                        nlohmann::json* claims);

// Signature check of `signing_input` with one key (exposed for tests).
bool verifySignature(Algorithm alg, const Key& key, std::string_view signing_input,
                     std::string_view signature);

}  // namespace sluice::filters::jwt
