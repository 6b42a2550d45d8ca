// jwt_auth unit tests: refused configs, the per-worker signature cache, random mutations of a
// valid token, base64url.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include "test/filters/jwt_auth/jwt_fixture.h"

namespace sluice::filters::jwt_testing {
namespace {

TEST_F(JwtAuthTest, RefusesBadConfigs) {
  TempFile weak_pem(tj::publicPem(tj::generateRsa(1024).get()));
  TempFile bad_json("{\"keys\": [");
  TempFile dup_kid(Json({{"keys", {tj::publicJwk(rsa_, "a"), tj::publicJwk(ec_, "a")}}}).dump());
  TempFile short_oct(Json({{"keys", {{{"kty", "oct"}, {"k", "c2hvcnQ"}}}}}).dump());
  TempFile bad_point(Json({{"keys",
                            {{{"kty", "EC"},
                              {"crv", "P-256"},
                              {"x", auth::base64UrlEncode(std::string(32, '\1'))},
                              {"y", auth::base64UrlEncode(std::string(32, '\2'))}}}}})
                         .dump());
  struct Case {
    std::string yaml;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "jwt_auth needs a config: algorithms and keys"},
           {"secret: " + kSecret + "\n", "missing 'algorithms' (a list of HS256, RS256, ES256)"},
           {"algorithms: [HS256, none]\nsecret: " + kSecret + "\n",
            "algorithm 'none' is never accepted"},
           {"algorithms: [HS512]\nsecret: " + kSecret + "\n",
            "unsupported algorithm 'HS512' (expected HS256, RS256 or ES256)"},
           {"algorithms: [HS256]\n",
            "no keys: set 'jwks_file', 'public_key_file', 'secret' or 'secret_file'"},
           {"algorithms: [HS256]\nsecret: short\n",
            "HMAC secret of 5 bytes (at least 32 required, RFC 7518 §3.2)"},
           {"algorithms: [RS256, HS256]\npublic_key_file: " + pem_->path() + "\n",
            "algorithm HS256 is allowed but no configured key can verify it"},
           {"algorithms: [RS256]\npublic_key_file: " + weak_pem.path() + "\n",
            weak_pem.path() + ": RSA key of 1024 bits (at least 2048 required)"},
           {"algorithms: [RS256]\npublic_key_file: " + bad_json.path() + "\n",
            bad_json.path() + ": no PEM PUBLIC KEY or CERTIFICATE found"},
           {"algorithms: [RS256]\njwks_file: " + bad_json.path() + "\n",
            bad_json.path() + ": not valid JSON"},
           {"algorithms: [RS256]\njwks_file: " + dup_kid.path() + "\n",
            dup_kid.path() + ": key 2 (kid 'a'): duplicate kid"},
           {"algorithms: [HS256]\njwks_file: " + short_oct.path() + "\n",
            short_oct.path() + ": key 1: HMAC key under 32 bytes (RFC 7518 §3.2)"},
           {"algorithms: [ES256]\njwks_file: " + bad_point.path() + "\n",
            bad_point.path() + ": key 1: invalid P-256 key (point not on the curve?)"},
           {"algorithms: [HS256]\nsecret_file: keys/secret\n",
            "cannot open '" + std::filesystem::current_path().string() +
                "/keys/secret': No such file or directory"},
           {"algorithms: [HS256]\nsecret: " + kSecret + "\nforward_claims: [{claim: 'a b'}]\n",
            "claim names are 1..60 of [A-Za-z0-9_.-] (context key jwt.<claim>)"},
           {"algorithms: [HS256]\nsecret: " + kSecret +
                "\nforward_claims: [{claim: sub, header: x-consumer}]\n",
            "a claim header must differ from the token and consumer headers"},
           {"algorithms: [HS256]\nsecret: " + kSecret +
                "\nconsumer_header: " + std::string(257, 'h') + "\n",
            "header name longer than 256 bytes"},
           {"algorithms: [HS256]\nsecret: " + kSecret + "\nleeway_s: 99999\n",
            "expected an integer from 0 to 3600"},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error(), c.message) << c.yaml;
  }
}

jwt::SignatureCache& cacheOf(FilterHarness& h) {
  using Plugin = sdk::internal::FilterPlugin<JwtAuthConfig, JwtAuthWorker, JwtAuthFilter>;
  return static_cast<Plugin::Worker*>(h.worker())->worker.cache;
}

TEST_F(JwtAuthTest, ARepeatedTokenSkipsTheSignatureButNotTheClaims) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml("leeway_s: 0\n"));
  jwt::SignatureCache& cache = cacheOf(h);
  std::string token = tj::signWithKey(ec_, {{"kid", "ec-1"}}, claims({{"exp", kNow + 100}}));
  EXPECT_EQ(reason(*run(h, token)), "");
  EXPECT_EQ(cache.signatureChecks(), 1u);
  EXPECT_EQ(reason(*run(h, token)), "");
  EXPECT_EQ(cache.signatureChecks(), 1u) << "second use verified the signature again";
  EXPECT_EQ(cache.size(), 1u);
  // The same header and claims with another signature is another token: checked, refused.
  std::string forged =
      token.substr(0, token.rfind('.') + 1) + auth::base64UrlEncode(std::string(64, '\x01'));
  EXPECT_EQ(reason(*run(h, forged)), "bad signature");
  EXPECT_EQ(cache.signatureChecks(), 2u);
  // Claims are checked on every use: once the token expired the cached signature does not help.
  FakeStream late("GET", "/", {{"Authorization", "Bearer " + token}});
  late.start_time_unix_us = static_cast<uint64_t>(kNow + 100) * 1000000;
  h.requestHeaders(late);
  EXPECT_EQ(reason(late), "token expired");
  // Invalid tokens are not remembered.
  std::string wrong_aud = tj::signWithKey(ec_, {{"kid", "ec-1"}}, claims({{"aud", "other"}}));
  FilterHarness strict(sluice_plugin_entry(), jwksYaml("audiences: [api]\n"));
  EXPECT_EQ(reason(*run(strict, wrong_aud)), "invalid audience");
  EXPECT_EQ(reason(*run(strict, wrong_aud)), "invalid audience");
  EXPECT_EQ(cacheOf(strict).signatureChecks(), 2u);
  EXPECT_EQ(cacheOf(strict).size(), 0u);

  FilterHarness off(sluice_plugin_entry(), jwksYaml("signature_cache_size: 0\n"));
  ASSERT_TRUE(off.configured()) << off.error();
  EXPECT_EQ(reason(*run(off, token)), "");
  EXPECT_EQ(reason(*run(off, token)), "");
  EXPECT_EQ(cacheOf(off).size(), 0u);
}

TEST(JwtSignatureCacheTest, BoundedAndExpiring) {
  jwt::SignatureCache cache(2);
  auth::Digest a = auth::sha256("a"), b = auth::sha256("b"), c = auth::sha256("c");
  cache.add(a, 100, 0);
  cache.add(b, 200, 0);
  EXPECT_TRUE(cache.contains(a, 50));
  EXPECT_FALSE(cache.contains(a, 100)) << "expired at its exp";
  cache.add(c, 300, 150);  // full: the expired one goes
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.contains(b, 150));
  EXPECT_TRUE(cache.contains(c, 150));
  cache.add(a, 400, 160);  // full, nothing expired: cleared, then a
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.contains(a, 160));
}

TEST_F(JwtAuthTest, RandomMutationsOfAValidTokenNeverPass) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml());
  std::string good = tj::signWithKey(ec_, {{"kid", "ec-1"}}, claims());
  ASSERT_EQ(reason(*run(h, good)), "");
  std::mt19937 rng(1234);
  const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \"{}";
  for (int i = 0; i < 3000; ++i) {
    std::string token = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % token.size();
      switch (rng() % 3) {
        case 0:
          token[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          token.erase(at, 1 + rng() % 8);
          break;
        default:
          token.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    if (token == good) continue;
    auto s = run(h, token);
    // Every change is refused, except spaces before the token (RFC 6750: 1*SP after "Bearer").
    if (!s->local_reply) {
      EXPECT_EQ(token.substr(token.find_first_not_of(' ')), good) << "mutated token admitted";
    }
  }
}

TEST(JwtBase64UrlTest, DecodesUnpaddedUrlSafeOnly) {
  EXPECT_EQ(auth::base64UrlDecode("").value(), "");
  EXPECT_EQ(auth::base64UrlDecode("Zg").value(), "f");
  EXPECT_EQ(auth::base64UrlDecode("Zm8").value(), "fo");
  EXPECT_EQ(auth::base64UrlDecode("Zm9v").value(), "foo");
  EXPECT_EQ(auth::base64UrlDecode("-_-_").value(), "\xfb\xff\xbf");
  EXPECT_FALSE(auth::base64UrlDecode("Zg=="));
  EXPECT_FALSE(auth::base64UrlDecode("+/+/"));
  EXPECT_FALSE(auth::base64UrlDecode("Z"));
  EXPECT_FALSE(auth::base64UrlDecode("Zm9v\n"));
  EXPECT_FALSE(auth::base64UrlDecode("Zh")) << "non-canonical: unused bits set";
  EXPECT_FALSE(auth::base64UrlDecode("Zm9"));
  EXPECT_EQ(auth::base64UrlEncode("\xfb\xff\xbf"), "-_-_");
}

}  // namespace
}  // namespace sluice::filters::jwt_testing
