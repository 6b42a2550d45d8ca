#include "filters/jwt_auth/jwt_verify.h"

#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <set>

#include "filters/auth_common/auth_common.h"

namespace sluice::filters::jwt {
namespace {

using Json = nlohmann::json;

struct Refused {};  // thrown from the parser callback

bool verifyHmac(const Key& key, std::string_view input, std::string_view signature) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
           reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac,
           &len) == nullptr) {
    return false;
  }
  return signature.size() == len && CRYPTO_memcmp(mac, signature.data(), len) == 0;
}

bool verifyDigest(EVP_PKEY* pkey, std::string_view input, const unsigned char* sig,
                  size_t sig_len) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok =
      ctx != nullptr && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1 &&
      EVP_DigestVerify(ctx, sig, sig_len, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

// JWS ES256 signatures are R || S, 32 bytes each (RFC 7518 §3.4); OpenSSL wants DER.
bool verifyEcdsa(const Key& key, std::string_view input, std::string_view signature) {
  if (signature.size() != 64) return false;
  const auto* raw = reinterpret_cast<const unsigned char*>(signature.data());
  BIGNUM* r = BN_bin2bn(raw, 32, nullptr);
  BIGNUM* s = BN_bin2bn(raw + 32, 32, nullptr);
  ECDSA_SIG* sig = ECDSA_SIG_new();
  if (r == nullptr || s == nullptr || sig == nullptr || ECDSA_SIG_set0(sig, r, s) != 1) {
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    return false;
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(sig, &der);
  ECDSA_SIG_free(sig);  // owns r and s
  bool ok = der_len > 0 && verifyDigest(key.pkey.get(), input, der, static_cast<size_t>(der_len));
  OPENSSL_free(der);
  return ok;
}

bool isNumber(const Json& v) { return v.is_number() && !v.is_boolean(); }

}  // namespace

bool parseJsonObject(std::string_view text, Json* out) {
  std::vector<std::set<std::string>> names;  // member names of each open object
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth > kMaxJsonDepth) throw Refused{};
    switch (event) {
      case Json::parse_event_t::object_start:
        names.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!names.empty()) names.pop_back();
        break;
      case Json::parse_event_t::key:
        if (names.empty() || !names.back().insert(parsed.get<std::string>()).second) {
          throw Refused{};
        }
        break;
      default:
        break;
    }
    return true;
  };
  try {
    *out = Json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true);
  } catch (const Refused&) {
    return false;
  } catch (const Json::exception&) {
    return false;
  }
  return out->is_object();
}

bool verifySignature(Algorithm alg, const Key& key, std::string_view input,
                     std::string_view signature) {
  if (!key.allows(alg)) return false;  // never an RSA key as an HMAC secret, or the reverse
  switch (alg) {
    case Algorithm::kHS256:
      return verifyHmac(key, input, signature);
    case Algorithm::kRS256:
      return verifyDigest(key.pkey.get(), input,
                          reinterpret_cast<const unsigned char*>(signature.data()),
                          signature.size());
    case Algorithm::kES256:
      return verifyEcdsa(key, input, signature);
  }
  return false;
}

bool SignatureCache::contains(const auth::Digest& token, double now_s) const {
  auto it = entries_.find(token);
  return it != entries_.end() && it->second > now_s;
}

void SignatureCache::add(const auth::Digest& token, double expires_s, double now_s) {
  if (max_entries_ == 0) return;
  if (entries_.size() >= max_entries_) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = it->second <= now_s ? entries_.erase(it) : std::next(it);
    }
    if (entries_.size() >= max_entries_) entries_.clear();
  }
  entries_[token] = expires_s;
}

std::string verifyToken(std::string_view token, const Policy& policy, double now_s, Json* claims,
                        SignatureCache* cache) {
  if (token.size() > policy.max_token_bytes) return "token too large";
  size_t dot1 = token.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return "malformed token";  // also JWE (five parts) and unsecured JWTs with no signature
  }
  std::string_view signing_input = token.substr(0, dot2);
  std::optional<std::string> header_text = auth::base64UrlDecode(token.substr(0, dot1));
  std::optional<std::string> payload_text =
      auth::base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  std::optional<std::string> signature = auth::base64UrlDecode(token.substr(dot2 + 1));
  if (!header_text || !payload_text || !signature) return "malformed token";
  Json header;
  if (!parseJsonObject(*header_text, &header)) return "malformed token";
  // RFC 7515 §4.1.11: extensions listed in "crit" must be understood; this filter knows none.
  if (header.contains("crit")) return "malformed token";
  auto alg_member = header.find("alg");
  if (alg_member == header.end() || !alg_member->is_string()) return "malformed token";
  std::optional<Algorithm> alg = algorithmFromName(alg_member->get<std::string>());
  if (!alg || std::find(policy.algorithms.begin(), policy.algorithms.end(), *alg) ==
                  policy.algorithms.end()) {
    return "unsupported algorithm";
  }
  std::optional<std::string> kid;
  if (auto k = header.find("kid"); k != header.end()) {
    if (!k->is_string()) return "malformed token";
    kid = k->get<std::string>();
  }
  // Candidates: keys with the token's kid; without a match (or without a kid), keys that have no
  // kid. Each only for an algorithm of its own type.
  std::vector<const Key*> candidates;
  if (kid) {
    for (const Key& key : policy.keys) {
      if (key.kid == *kid) candidates.push_back(&key);
    }
  }
  if (candidates.empty()) {
    for (const Key& key : policy.keys) {
      if (key.kid.empty() || !kid) candidates.push_back(&key);
    }
  }
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                  [&](const Key* k) { return !k->allows(*alg); }),
                   candidates.end());
  if (candidates.empty()) return "unknown key id";
  auth::Digest digest{};
  bool verified = false;
  if (cache != nullptr) {
    digest = auth::sha256(token);
    verified = cache->contains(digest, now_s);
  }
  if (!verified) {
    if (cache != nullptr) cache->countSignatureCheck();
    for (const Key* key : candidates) {
      if (verifySignature(*alg, *key, signing_input, *signature)) {
        verified = true;
        break;
      }
    }
    if (!verified) return "bad signature";
  } else {
    cache = nullptr;  // already remembered
  }

  Json payload;
  if (!parseJsonObject(*payload_text, &payload)) return "malformed token";
  double leeway = static_cast<double>(policy.leeway_s);
  if (auto exp = payload.find("exp"); exp != payload.end()) {
    if (!isNumber(*exp)) return "malformed token";
    if (now_s >= exp->get<double>() + leeway) return "token expired";
  } else if (policy.require_exp) {
    return "missing exp";
  }
  if (auto nbf = payload.find("nbf"); nbf != payload.end()) {
    if (!isNumber(*nbf)) return "malformed token";
    if (now_s + leeway < nbf->get<double>()) return "token not yet valid";
  }
  if (!policy.issuers.empty()) {
    auto iss = payload.find("iss");
    if (iss == payload.end() || !iss->is_string() ||
        std::find(policy.issuers.begin(), policy.issuers.end(), iss->get<std::string>()) ==
            policy.issuers.end()) {
      return "invalid issuer";
    }
  }
  if (!policy.audiences.empty()) {
    auto aud = payload.find("aud");
    bool match = false;
    auto accepted = [&](const Json& v) {
      return v.is_string() && std::find(policy.audiences.begin(), policy.audiences.end(),
                                        v.get<std::string>()) != policy.audiences.end();
    };
    if (aud != payload.end()) {
      if (aud->is_array()) {
        for (const Json& v : *aud) match = match || accepted(v);
      } else {
        match = accepted(*aud);
      }
    }
    if (!match) return "invalid audience";
  }
  if (cache != nullptr) {
    auto exp = payload.find("exp");
    double expires = exp != payload.end() ? exp->get<double>() + leeway : now_s + 300;
    cache->add(digest, expires, now_s);
  }
  *claims = std::move(payload);
  return "";
}

}  // namespace sluice::filters::jwt
