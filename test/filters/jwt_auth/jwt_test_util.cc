#include "test/filters/jwt_auth/jwt_test_util.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <stdexcept>
#include <vector>

#include "filters/auth_common/auth_common.h"

namespace sluice::testing::jwt {
namespace {

using filters::auth::base64UrlEncode;

Pkey keygen(const char* type, int rsa_bits, const char* group) {
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr);
  EVP_PKEY* key = nullptr;
  bool ok = ctx != nullptr && EVP_PKEY_keygen_init(ctx) == 1;
  if (ok && rsa_bits > 0) ok = EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, rsa_bits) == 1;
  if (ok && group != nullptr) ok = EVP_PKEY_CTX_set_group_name(ctx, group) == 1;
  ok = ok && EVP_PKEY_keygen(ctx, &key) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!ok) throw std::runtime_error("keygen failed");
  return Pkey(key);
}

std::string bnParam(EVP_PKEY* key, const char* name, int pad) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) throw std::runtime_error(name);
  int len = pad > 0 ? pad : BN_num_bytes(bn);
  std::string out(static_cast<size_t>(len), '\0');
  BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), len);
  BN_free(bn);
  return out;
}

std::string signingInput(const nlohmann::json& header, const nlohmann::json& payload) {
  return base64UrlEncode(header.dump()) + "." + base64UrlEncode(payload.dump());
}

}  // namespace

Pkey generateRsa(int bits) { return keygen("RSA", bits, nullptr); }
Pkey generateP256() { return keygen("EC", 0, "P-256"); }

std::string publicPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  return pem;
}

nlohmann::json publicJwk(EVP_PKEY* key, const std::string& kid) {
  nlohmann::json jwk;
  if (EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA) {
    jwk = {{"kty", "RSA"},
           {"n", base64UrlEncode(bnParam(key, OSSL_PKEY_PARAM_RSA_N, 0))},
           {"e", base64UrlEncode(bnParam(key, OSSL_PKEY_PARAM_RSA_E, 0))}};
  } else {
    jwk = {{"kty", "EC"},
           {"crv", "P-256"},
           {"x", base64UrlEncode(bnParam(key, OSSL_PKEY_PARAM_EC_PUB_X, 32))},
           {"y", base64UrlEncode(bnParam(key, OSSL_PKEY_PARAM_EC_PUB_Y, 32))}};
  }
  if (!kid.empty()) jwk["kid"] = kid;
  return jwk;
}

std::string signWithKey(EVP_PKEY* key, nlohmann::json header, const nlohmann::json& payload) {
  bool rsa = EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA;
  if (!header.contains("alg")) header["alg"] = rsa ? "RS256" : "ES256";
  std::string input = signingInput(header, payload);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t len = 0;
  std::vector<unsigned char> sig;
  bool ok = EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
            EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()) == 1;
  sig.resize(len);
  ok =
      ok && EVP_DigestSign(ctx, sig.data(), &len,
                           reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) throw std::runtime_error("sign failed");
  sig.resize(len);
  std::string raw;
  if (rsa) {
    raw.assign(reinterpret_cast<const char*>(sig.data()), sig.size());
  } else {
    // DER ECDSA-Sig-Value → R || S, 32 bytes each (RFC 7518 §3.4).
    const unsigned char* p = sig.data();
    ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    raw.assign(64, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(es), reinterpret_cast<unsigned char*>(raw.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(es), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
    ECDSA_SIG_free(es);
  }
  return input + "." + base64UrlEncode(raw);
}

std::string signWithSecret(const std::string& secret, nlohmann::json header,
                           const nlohmann::json& payload) {
  if (!header.contains("alg")) header["alg"] = "HS256";
  std::string input = signingInput(header, payload);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." + base64UrlEncode(std::string(reinterpret_cast<char*>(mac), len));
}

std::string signRawWithSecret(const std::string& secret, const std::string& header_text,
                              const std::string& payload_text) {
  std::string input = base64UrlEncode(header_text) + "." + base64UrlEncode(payload_text);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." + base64UrlEncode(std::string(reinterpret_cast<char*>(mac), len));
}

std::string unsignedToken(nlohmann::json header, const nlohmann::json& payload) {
  return signingInput(header, payload) + ".";
}

}  // namespace sluice::testing::jwt
