// Test helpers for jwt_auth: keys generated with OpenSSL (EVP_PKEY_keygen), their JWK and PEM
// forms, and compact JWS tokens signed with EVP_DigestSign / HMAC. Not for production use.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace sluice::testing::jwt {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

// A fresh RSA key of `bits` bits, or a fresh P-256 key.
Pkey generateRsa(int bits = 2048);
Pkey generateP256();

// The public key as PEM (SubjectPublicKeyInfo).
std::string publicPem(EVP_PKEY* key);
// The public key as a JWK object: {"kty":"RSA","n","e"} or {"kty":"EC","crv":"P-256","x","y"},
// with "kid" when not empty.
nlohmann::json publicJwk(EVP_PKEY* key, const std::string& kid);

// base64url(header) "." base64url(payload) "." base64url(signature) with `alg` set in the header
// to `alg_name` (the caller may put anything there, e.g. "none"):
//   signWithKey: RS256 (PKCS#1 v1.5, SHA-256) for RSA keys, ES256 (raw R||S) for EC keys.
//   signWithSecret: HMAC-SHA256 with `secret`.
std::string signWithKey(EVP_PKEY* key, nlohmann::json header, const nlohmann::json& payload);
std::string signWithSecret(const std::string& secret, nlohmann::json header,
                           const nlohmann::json& payload);
// HS256 over raw header and payload text (for malformed JSON that is correctly signed).
std::string signRawWithSecret(const std::string& secret, const std::string& header_text,
                              const std::string& payload_text);
// The two first parts of a token with an empty signature (unsecured JWS, alg "none").
std::string unsignedToken(nlohmann::json header, const nlohmann::json& payload);

}  // namespace sluice::testing::jwt
