// jwt_auth's verification keys: JWKS files (RFC 7517, key parameters of RFC 7518 §6), PEM public
// keys or certificates, and HMAC secrets; and the JOSE algorithms this filter implements.
//
// Threads: built on the main thread at config load, then read-only; EVP_PKEY objects are shared
// by every worker (OpenSSL allows concurrent verification with one key).
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::filters::jwt {

// JWS "alg" values implemented (RFC 7518 §3.1). "none" is never one of them.
enum class Algorithm { kHS256, kRS256, kES256 };
std::optional<Algorithm> algorithmFromName(std::string_view name);
const char* algorithmName(Algorithm alg);

// Key types (JWK "kty"): an algorithm is only ever verified with a key of its own type, so an
// RSA public key can never be used as an HMAC secret (algorithm confusion).
enum class KeyType { kOct, kRsa, kEc };
KeyType keyTypeFor(Algorithm alg);

struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};

struct Key {
  std::string kid;  // "" = no key id (matches tokens with or without a kid)
  KeyType type = KeyType::kOct;
  std::string secret;              // kOct: the HMAC key bytes
  std::shared_ptr<EVP_PKEY> pkey;  // kRsa (>= 2048 bits), kEc (P-256): the public key
  std::optional<Algorithm> alg;    // the JWK's "alg", when it names one: only that algorithm
  std::string origin;              // for messages: "JWKS key 2 (kid 'a')", "public_key_file"

  // True when this key may verify `a` (type matches, and the JWK's alg if any).
  bool allows(Algorithm a) const { return keyTypeFor(a) == type && (!alg || *alg == a); }
};

// Parses a JWKS document ({"keys": [...]}). Keys with "use" other than "sig", or of a type or
// curve this filter does not implement (OKP, P-384, ...), are skipped and described in
// `skipped`. Throws std::runtime_error with the reason for a malformed document or key (bad
// base64url, RSA under 2048 bits, EC point not on P-256, duplicate kid, an HMAC key under 32
// bytes).
std::vector<Key> parseJwks(std::string_view json, std::vector<std::string>* skipped);

// Parses a PEM "PUBLIC KEY" (SubjectPublicKeyInfo) or "CERTIFICATE" holding an RSA (>= 2048
// bits) or P-256 key. Throws std::runtime_error with the reason.
Key parsePemPublicKey(std::string_view pem);

// An HMAC secret (raw bytes; RFC 7518 §3.2: at least 32 bytes for HS256). Throws when shorter.
Key secretKey(std::string secret);

}  // namespace sluice::filters::jwt
