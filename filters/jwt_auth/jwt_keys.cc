#include "filters/jwt_auth/jwt_keys.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "filters/auth_common/auth_common.h"

namespace sluice::filters::jwt {
namespace {

using Json = nlohmann::json;

std::runtime_error error(const std::string& what) { return std::runtime_error(what); }

std::shared_ptr<EVP_PKEY> own(EVP_PKEY* p) { return std::shared_ptr<EVP_PKEY>(p, PkeyDeleter()); }

// Refuses keys this filter will not verify with.
void checkPkey(EVP_PKEY* pkey, KeyType* type) {
  if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA) {
    if (EVP_PKEY_get_bits(pkey) < 2048) {
      throw error("RSA key of " + std::to_string(EVP_PKEY_get_bits(pkey)) +
                  " bits (at least 2048 required)");
    }
    *type = KeyType::kRsa;
    return;
  }
  if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC) {
    char group[64] = "";
    size_t len = 0;
    if (EVP_PKEY_get_group_name(pkey, group, sizeof(group), &len) != 1 ||
        std::string_view(group) != "prime256v1") {
      throw error(std::string("EC key on curve '") + group + "' (only P-256 is supported)");
    }
    *type = KeyType::kEc;
    return;
  }
  throw error("unsupported key type (RSA or EC P-256 expected)");
}

std::string member(const Json& jwk, const char* name) {
  auto it = jwk.find(name);
  if (it == jwk.end()) throw error(std::string("missing \"") + name + "\"");
  if (!it->is_string()) throw error(std::string("\"") + name + "\" is not a string");
  std::optional<std::string> bytes = auth::base64UrlDecode(it->get<std::string>());
  if (!bytes || bytes->empty()) throw error(std::string("\"") + name + "\" is not base64url");
  return *bytes;
}

std::shared_ptr<EVP_PKEY> fromParams(const char* type, OSSL_PARAM_BLD* bld) {
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr);
  EVP_PKEY* pkey = nullptr;
  bool ok = params != nullptr && ctx != nullptr && EVP_PKEY_fromdata_init(ctx) == 1 &&
            EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) == 1;
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  if (!ok) throw error("OpenSSL refused the key parameters");
  return own(pkey);
}

std::shared_ptr<EVP_PKEY> rsaFromJwk(const Json& jwk) {
  std::string n = member(jwk, "n"), e = member(jwk, "e");
  BIGNUM* bn_n = BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()),
                           static_cast<int>(n.size()), nullptr);
  BIGNUM* bn_e = BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()),
                           static_cast<int>(e.size()), nullptr);
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  bool ok = bn_n != nullptr && bn_e != nullptr && bld != nullptr &&
            OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
            OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1;
  std::shared_ptr<EVP_PKEY> pkey;
  try {
    if (ok) pkey = fromParams("RSA", bld);
  } catch (...) {
    ok = false;
  }
  OSSL_PARAM_BLD_free(bld);
  BN_free(bn_n);
  BN_free(bn_e);
  if (!ok) throw error("invalid RSA key");
  return pkey;
}

std::shared_ptr<EVP_PKEY> ecFromJwk(const Json& jwk) {
  auto crv = jwk.find("crv");
  if (crv == jwk.end() || !crv->is_string()) throw error("missing \"crv\"");
  std::string x = member(jwk, "x"), y = member(jwk, "y");
  if (x.size() != 32 || y.size() != 32) throw error("P-256 \"x\" and \"y\" must be 32 bytes");
  std::string point = "\x04" + x + y;  // uncompressed SEC 1 point
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  bool ok =
      bld != nullptr &&
      OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
      OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) ==
          1;
  std::shared_ptr<EVP_PKEY> pkey;
  try {
    if (ok) pkey = fromParams("EC", bld);
  } catch (...) {
    ok = false;
  }
  OSSL_PARAM_BLD_free(bld);
  if (!ok) throw error("invalid P-256 key (point not on the curve?)");
  // fromdata does not always check the point: do it here.
  EVP_PKEY_CTX* check = EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr);
  bool on_curve = check != nullptr && EVP_PKEY_public_check(check) == 1;
  EVP_PKEY_CTX_free(check);
  if (!on_curve) throw error("invalid P-256 key (point not on the curve)");
  return pkey;
}

}  // namespace

std::optional<Algorithm> algorithmFromName(std::string_view name) {
  if (name == "HS256") return Algorithm::kHS256;
  if (name == "RS256") return Algorithm::kRS256;
  if (name == "ES256") return Algorithm::kES256;
  return std::nullopt;
}

const char* algorithmName(Algorithm alg) {
  switch (alg) {
    case Algorithm::kHS256:
      return "HS256";
    case Algorithm::kRS256:
      return "RS256";
    case Algorithm::kES256:
      return "ES256";
  }
  return "?";
}

KeyType keyTypeFor(Algorithm alg) {
  switch (alg) {
    case Algorithm::kHS256:
      return KeyType::kOct;
    case Algorithm::kRS256:
      return KeyType::kRsa;
    case Algorithm::kES256:
      return KeyType::kEc;
  }
  return KeyType::kOct;
}

std::vector<Key> parseJwks(std::string_view text, std::vector<std::string>* skipped) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw error("not valid JSON");
  if (!doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array()) {
    throw error("expected a JWK Set: {\"keys\": [...]}");
  }
  std::vector<Key> keys;
  std::set<std::string> kids;
  size_t index = 0;
  for (const Json& jwk : doc["keys"]) {
    ++index;
    std::string where = "key " + std::to_string(index);
    try {
      if (!jwk.is_object()) throw error("not an object");
      Key key;
      if (auto kid = jwk.find("kid"); kid != jwk.end()) {
        if (!kid->is_string()) throw error("\"kid\" is not a string");
        key.kid = kid->get<std::string>();
        where += " (kid '" + key.kid + "')";
      }
      auto kty = jwk.find("kty");
      if (kty == jwk.end() || !kty->is_string()) throw error("missing \"kty\"");
      if (auto use = jwk.find("use"); use != jwk.end() && *use != "sig") {
        if (skipped != nullptr) skipped->push_back(where + ": \"use\" is not \"sig\"");
        continue;
      }
      if (auto alg = jwk.find("alg"); alg != jwk.end()) {
        if (!alg->is_string()) throw error("\"alg\" is not a string");
        key.alg = algorithmFromName(alg->get<std::string>());
        if (!key.alg) {
          if (skipped != nullptr) {
            skipped->push_back(where + ": alg '" + alg->get<std::string>() + "' not supported");
          }
          continue;
        }
      }
      const std::string& type = kty->get_ref<const std::string&>();
      if (type == "RSA") {
        key.type = KeyType::kRsa;
        key.pkey = rsaFromJwk(jwk);
      } else if (type == "EC") {
        if (jwk.value("crv", "") != "P-256") {
          if (skipped != nullptr) skipped->push_back(where + ": curve not supported");
          continue;
        }
        key.type = KeyType::kEc;
        key.pkey = ecFromJwk(jwk);
      } else if (type == "oct") {
        key.type = KeyType::kOct;
        key.secret = member(jwk, "k");
        if (key.secret.size() < 32) throw error("HMAC key under 32 bytes (RFC 7518 §3.2)");
      } else {
        if (skipped != nullptr) skipped->push_back(where + ": kty '" + type + "' not supported");
        continue;
      }
      if (key.pkey) {
        KeyType checked;
        checkPkey(key.pkey.get(), &checked);
      }
      if (key.alg && !key.allows(*key.alg)) throw error("\"alg\" does not match \"kty\"");
      if (!key.kid.empty() && !kids.insert(key.kid).second) throw error("duplicate kid");
      key.origin = "JWKS " + where;
      keys.push_back(std::move(key));
    } catch (const nlohmann::json::exception& e) {
      throw error(where + ": " + e.what());
    } catch (const std::runtime_error& e) {
      throw error(where + ": " + e.what());
    }
  }
  return keys;
}

Key parsePemPublicKey(std::string_view pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) throw error("out of memory");
  EVP_PKEY* pkey = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  if (pkey == nullptr) {
    BIO_reset(bio);
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (cert != nullptr) pkey = X509_get_pubkey(cert);
    X509_free(cert);
  }
  BIO_free(bio);
  if (pkey == nullptr) throw error("no PEM PUBLIC KEY or CERTIFICATE found");
  Key key;
  key.pkey = own(pkey);
  checkPkey(pkey, &key.type);
  key.origin = "public_key_file";
  return key;
}

Key secretKey(std::string secret) {
  if (secret.size() < 32) {
    throw error("HMAC secret of " + std::to_string(secret.size()) +
                " bytes (at least 32 required, RFC 7518 §3.2)");
  }
  Key key;
  key.type = KeyType::kOct;
  key.secret = std::move(secret);
  key.origin = "secret";
  return key;
}

}  // namespace sluice::filters::jwt
