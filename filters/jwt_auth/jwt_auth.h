// jwt_auth — admits requests with a valid JWT (RFC 7519) signed as a JWS (RFC 7515) with HS256,
// RS256 or ES256 (RFC 7518), verified through OpenSSL; refuses the rest with 401.
//
// Token: from `Authorization: Bearer <token>` (RFC 6750 §2.1) by default; or from another header
// (`header:`, the whole value is the token) and/or a query parameter (`query_param:`, RFC 6750
// §2.3 calls it access_token), read when the header is absent.
//
// Keys (at least one source; all are read at config load, so a reload reads the files again):
//   jwks_file        a JWK Set (RFC 7517): kty RSA (n, e; >= 2048 bits), EC (crv P-256, x, y),
//                    oct (k, >= 32 bytes); "use": "enc" keys and other types are skipped (and
//                    logged); a JWK's "alg" restricts that key to it. Selected by the token's kid.
//   public_key_file  PEM public key or certificate (RSA >= 2048 bits or P-256), no kid.
//   secret | secret_file  HMAC key bytes (>= 32 bytes), no kid. secret_file: the file's bytes
//                    with one trailing newline removed.
// A token's kid selects the keys with that kid, else the keys without a kid; a token without kid
// is tried against every key. A key only verifies the algorithm of its own type: HS256 only with
// an oct key or secret, RS256 only with RSA, ES256 only with P-256. So a token "signed" with HS256
// using the RSA public key as the secret finds no HMAC key (algorithm confusion), and "none" is
// never accepted (it cannot be in `algorithms`).
//
// Checks (RFC 7519 §4.1): `exp` (required unless require_exp: false) and `nbf`, both with
// `leeway_s` of clock skew, against the request's start time; `iss` in `issuers` when set; `aud`
// (a string or an array in the token) sharing a value with `audiences` when set. JOSE headers
// with "crit", duplicate JSON member names, nesting over 16 levels and tokens over
// `max_token_bytes` are refused.
//
// On success: context `consumer` = the `consumer_claim` (default `sub`, when it is a string),
// `auth.method` = `jwt`, and `jwt.<claim>` for each forwarded claim; the consumer goes in
// `consumer_header`, each forwarded claim in its header (strings as is, other JSON values
// compact-serialised; values with CR/LF or over 4096 bytes are not forwarded). Incoming copies
// of `consumer_header` and of every claim header are removed on every request, so a client
// cannot forge them. With strip_credential on (the default) the token header is removed before
// forwarding, and a token from the query parameter is removed from the request target sent
// upstream (the other parameters keep their bytes and order; the access log keeps the client's).
//
// On failure: 401, Content-Type application/json, body {"error":"unauthorized","reason":R}, and
//   WWW-Authenticate: Bearer realm="<realm>"                    (no token: RFC 6750 §3.1)
//   WWW-Authenticate: Bearer realm="<realm>", error="invalid_token", error_description="R"
// (realm only when configured). R: "missing token", "token too large", "malformed token",
// "unsupported algorithm", "unknown key id", "bad signature", "token expired",
// "token not yet valid", "missing exp", "invalid issuer", "invalid audience" — never the token,
// a claim value or a key.
//
// Signature cache: each worker remembers up to `signature_cache_size` tokens whose signature
// verified (by SHA-256 of the token), until their exp: a repeated token skips RSA/ECDSA (claims
// are still checked every time). See jwt::SignatureCache.
//
// Metrics: sluice_plugin_jwt_auth_allowed_total and sluice_plugin_jwt_auth_denied_total{
// reason=R with spaces as '_'} for each R above.
//
// YAML:
//   filters:
//     - name: jwt_auth
//       config:
//         algorithms: [RS256, ES256]      # required: the allow-list (HS256, RS256, ES256)
//         jwks_file: /etc/sluice/jwks.json
//         public_key_file: /etc/sluice/jwt.pem
//         secret: "32+ bytes of shared secret......"   # or secret_file: /abs/path
//         issuers: [https://idp.example.com/]    # a string or a list
//         audiences: [api]                       # a string or a list
//         leeway_s: 60                    # 0..3600
//         require_exp: true
//         header: Authorization           # "" = do not read a header
//         query_param: access_token       # default: none
//         strip_credential: true          # remove the token (header or query) upstream
//         consumer_claim: sub
//         consumer_header: X-Consumer     # "" = do not forward
//         forward_claims:                 # header optional: context jwt.<claim> only
//           - {claim: sub, header: X-User}
//           - {claim: scope}
//         realm: api                      # realm of WWW-Authenticate (default none)
//         max_token_bytes: 8192           # 256..65536
//         signature_cache_size: 1000      # per worker; 0 = verify every signature
// File paths are absolute or relative to the config file's directory. The files are read when the
// config instance is created and declared to the host (dependsOnFile): a reload re-reads them and
// rebuilds the filter when a file's content changed, even when the YAML is the same.
#pragma once

#include <string>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/host.h"
#include "filters/auth_common/auth_common.h"
#include "filters/jwt_auth/jwt_verify.h"

namespace sluice::filters {

// Immutable after construction (main thread); read by every worker.
struct JwtAuthConfig {
  JwtAuthConfig(const sdk::ConfigNode& node, const sdk::Host& host);

  jwt::Policy policy;
  std::string header = "Authorization";
  bool bearer = true;  // header is Authorization: expect the Bearer scheme
  std::string query_param;
  bool strip_credential = true;
  std::string consumer_claim = "sub";
  std::string consumer_header = "X-Consumer";
  struct ForwardClaim {
    std::string claim;
    std::string header;           // "" = context only
    sdk::HeaderName header_name;  // `header` resolved by the host once (ABI 1.4); empty when unset
  };
  std::vector<ForwardClaim> forward_claims;
  // `header` and `consumer_header` resolved by the host once (ABI 1.4); empty when unset.
  sdk::HeaderName header_name, consumer_header_name;
  std::string realm;
  size_t signature_cache_size = 1000;
  auth::DecisionCounters counters;
};

// Per worker: the signature cache. Worker thread only.
struct JwtAuthWorker {
  explicit JwtAuthWorker(const JwtAuthConfig& config) : cache(config.signature_cache_size) {}
  jwt::SignatureCache cache;
};

// Per request.
class JwtAuthFilter : public sdk::Filter {
 public:
  JwtAuthFilter(const JwtAuthConfig& config, JwtAuthWorker& worker)
      : config_(config), worker_(worker) {}
  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;

 private:
  sdk::FilterStatus refuse(sdk::Stream& stream, const std::string& reason, bool missing);
  const JwtAuthConfig& config_;
  JwtAuthWorker& worker_;
};

}  // namespace sluice::filters
