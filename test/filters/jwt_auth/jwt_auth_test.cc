// jwt_auth unit tests, requests: RSA 2048 and P-256 keys generated with OpenSSL, tokens signed
// here, the plugin driven through its C hook table over the fake host.
#include <gtest/gtest.h>

#include <string>

#include "test/filters/jwt_auth/jwt_fixture.h"

namespace sluice::filters::jwt_testing {
namespace {

TEST_F(JwtAuthTest, Rs256FromJwksForwardsClaimsAndConsumer) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml(R"(
forward_claims:
  - {claim: sub, header: X-User}
  - {claim: roles, header: X-Roles}
  - {claim: tenant}
  - {claim: absent, header: X-Absent}
)"));
  ASSERT_TRUE(h.configured()) << h.error();
  auto s = run(h, rs256(claims({{"roles", {"admin", "dev"}}, {"tenant", "acme"}})),
               {{"X-User", "forged"}, {"X-Consumer", "forged"}, {"X-Absent", "forged"}});
  EXPECT_EQ(last_status_, SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(reason(*s), "");
  EXPECT_EQ(s->context["consumer"], "user-42");
  EXPECT_EQ(s->context["auth.method"], "jwt");
  EXPECT_EQ(s->context["jwt.sub"], "user-42");
  EXPECT_EQ(s->context["jwt.roles"], R"(["admin","dev"])");
  EXPECT_EQ(s->context["jwt.tenant"], "acme");
  EXPECT_FALSE(s->context.count("jwt.absent"));
  EXPECT_EQ(s->values(SLUICE_HEADERS_REQUEST, "X-User"), std::vector<std::string>{"user-42"});
  EXPECT_EQ(s->values(SLUICE_HEADERS_REQUEST, "X-Consumer"), std::vector<std::string>{"user-42"});
  EXPECT_EQ(s->values(SLUICE_HEADERS_REQUEST, "X-Roles"),
            std::vector<std::string>{R"(["admin","dev"])"});
  EXPECT_TRUE(s->values(SLUICE_HEADERS_REQUEST, "X-Absent").empty()) << "forged copy kept";
  EXPECT_TRUE(s->values(SLUICE_HEADERS_REQUEST, "Authorization").empty()) << "token forwarded";
}

TEST_F(JwtAuthTest, Es256AndHs256FromJwks) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml());
  ASSERT_TRUE(h.configured()) << h.error();
  auto es = run(h, tj::signWithKey(ec_, {{"kid", "ec-1"}}, claims()));
  EXPECT_EQ(reason(*es), "");
  auto hs = run(h, tj::signWithSecret(kOctSecret, {{"kid", "hs-1"}}, claims()));
  EXPECT_EQ(reason(*hs), "");
  // Without a kid every key of the algorithm's type is tried.
  auto no_kid = run(h, tj::signWithKey(ec_, Json::object(), claims()));
  EXPECT_EQ(reason(*no_kid), "");
}

TEST_F(JwtAuthTest, SecretAndPemKeys) {
  FilterHarness secret(sluice_plugin_entry(), "algorithms: HS256\nsecret: " + kSecret + "\n");
  ASSERT_TRUE(secret.configured()) << secret.error();
  EXPECT_EQ(reason(*run(secret, tj::signWithSecret(kSecret, Json::object(), claims()))), "");
  EXPECT_EQ(reason(*run(secret, tj::signWithSecret(kSecret + "x", Json::object(), claims()))),
            "bad signature");

  TempFile secret_file(kSecret + "\n");
  FilterHarness from_file(sluice_plugin_entry(),
                          "algorithms: [HS256]\nsecret_file: " + secret_file.path() + "\n");
  ASSERT_TRUE(from_file.configured()) << from_file.error();
  EXPECT_EQ(reason(*run(from_file, tj::signWithSecret(kSecret, {{"kid", "x"}}, claims()))), "");

  FilterHarness pem(sluice_plugin_entry(),
                    "algorithms: [RS256]\npublic_key_file: " + pem_->path() + "\n");
  ASSERT_TRUE(pem.configured()) << pem.error();
  EXPECT_EQ(reason(*run(pem, rs256(claims(), ""))), "");
  EXPECT_EQ(reason(*run(pem, rs256(claims(), "any-kid"))), "") << "kid-less keys match any kid";
  EXPECT_EQ(reason(*run(pem, tj::signWithKey(other_rsa_, Json::object(), claims()))),
            "bad signature");
}

TEST_F(JwtAuthTest, ExpiryAndNotBeforeWithLeeway) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml("leeway_s: 60\n"));
  EXPECT_EQ(reason(*run(h, rs256(claims({{"exp", kNow - 61}})))), "token expired");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"exp", kNow - 30}})))), "") << "within leeway";
  EXPECT_EQ(reason(*run(h, rs256(claims({{"exp", kNow - 59.5}})))), "") << "fractional exp";
  EXPECT_EQ(reason(*run(h, rs256(claims({{"nbf", kNow + 61}})))), "token not yet valid");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"nbf", kNow + 30}})))), "") << "within leeway";
  EXPECT_EQ(reason(*run(h, rs256(claims({{"exp", nullptr}})))), "missing exp");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"exp", "tomorrow"}})))), "malformed token");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"nbf", true}})))), "malformed token");

  FilterHarness strict(sluice_plugin_entry(), jwksYaml("leeway_s: 0\nrequire_exp: false\n"));
  EXPECT_EQ(reason(*run(strict, rs256(claims({{"exp", kNow}})))), "token expired");
  EXPECT_EQ(reason(*run(strict, rs256(claims({{"exp", kNow + 1}})))), "");
  EXPECT_EQ(reason(*run(strict, rs256(claims({{"exp", nullptr}})))), "") << "exp optional";
}

TEST_F(JwtAuthTest, IssuerAndAudience) {
  FilterHarness h(
      sluice_plugin_entry(),
      jwksYaml("issuers: [https://other, https://idp.example]\naudiences: [web, api]\n"));
  ASSERT_TRUE(h.configured()) << h.error();
  EXPECT_EQ(reason(*run(h, rs256(claims()))), "");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"iss", "https://evil"}})))), "invalid issuer");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"iss", nullptr}})))), "invalid issuer");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"iss", {"https://idp.example"}}})))), "invalid issuer");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"aud", {"x", "web"}}})))), "");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"aud", {"x", "y"}}})))), "invalid audience");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"aud", "API"}})))), "invalid audience");
  EXPECT_EQ(reason(*run(h, rs256(claims({{"aud", nullptr}})))), "invalid audience");

  FilterHarness unchecked(sluice_plugin_entry(), jwksYaml());
  EXPECT_EQ(reason(*run(unchecked, rs256(claims({{"aud", "anything"}, {"iss", 7}})))), "");
}

TEST_F(JwtAuthTest, AlgNoneIsNeverAccepted) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml());
  for (const char* none : {"none", "None", "NONE"}) {
    EXPECT_EQ(reason(*run(h, tj::unsignedToken({{"alg", none}}, claims()))),
              "unsupported algorithm")
        << none;
    // With a signature part that is the RS256 one: still refused.
    std::string signed_token = rs256(claims());
    std::string sig = signed_token.substr(signed_token.rfind('.'));
    std::string forged = tj::unsignedToken({{"alg", none}, {"kid", "rsa-1"}}, claims());
    forged.pop_back();
    EXPECT_EQ(reason(*run(h, forged + sig)), "unsupported algorithm");
  }
}

TEST_F(JwtAuthTest, AlgorithmConfusionRsaPublicKeyAsHmacSecret) {
  std::string pem = tj::publicPem(rsa_);
  // HS256 not allowed: refused before any key is looked at.
  FilterHarness rs_only(sluice_plugin_entry(),
                        "algorithms: [RS256]\npublic_key_file: " + pem_->path() + "\n");
  ASSERT_TRUE(rs_only.configured()) << rs_only.error();
  EXPECT_EQ(reason(*run(rs_only, tj::signWithSecret(pem, Json::object(), claims()))),
            "unsupported algorithm");
  // HS256 allowed (the JWKS has an oct key), token claims the RSA key's kid: the RSA key is never
  // an HMAC key, so no key is found.
  FilterHarness mixed(sluice_plugin_entry(), jwksYaml());
  EXPECT_EQ(reason(*run(mixed, tj::signWithSecret(pem, {{"kid", "rsa-1"}}, claims()))),
            "unknown key id");
  // Without a kid: only the oct key is tried, and the PEM is not its secret.
  EXPECT_EQ(reason(*run(mixed, tj::signWithSecret(pem, Json::object(), claims()))),
            "bad signature");
  // An RS256 token claiming the HMAC key's kid: that key is never an RSA key.
  EXPECT_EQ(reason(*run(mixed, rs256(claims(), "hs-1"))), "unknown key id");
}

TEST_F(JwtAuthTest, BadSignaturesAndKeyIds) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml());
  EXPECT_EQ(reason(*run(h, tj::signWithKey(other_rsa_, {{"kid", "rsa-1"}}, claims()))),
            "bad signature");
  EXPECT_EQ(reason(*run(h, rs256(claims(), "no-such-kid"))), "unknown key id");
  EXPECT_EQ(reason(*run(h, rs256(claims(), "ed-1"))), "unknown key id") << "skipped OKP key";
  EXPECT_EQ(reason(*run(h, rs256(claims(), "enc-1"))), "unknown key id") << "use: enc skipped";
  // ES256 signed with the right key but a kid of an RSA key.
  EXPECT_EQ(reason(*run(h, tj::signWithKey(ec_, {{"kid", "rsa-1"}}, claims()))), "unknown key id");
  // A payload changed after signing.
  std::string token = rs256(claims());
  size_t dot1 = token.find('.'), dot2 = token.rfind('.');
  std::string tampered = token.substr(0, dot1 + 1) +
                         auth::base64UrlEncode(claims({{"sub", "admin"}}).dump()) +
                         token.substr(dot2);
  EXPECT_EQ(reason(*run(h, tampered)), "bad signature");
  // A truncated ES256 signature (R||S must be 64 bytes).
  std::string es = tj::signWithKey(ec_, {{"kid", "ec-1"}}, claims());
  std::string es_sig = auth::base64UrlDecode(es.substr(es.rfind('.') + 1)).value();
  ASSERT_EQ(es_sig.size(), 64u);
  std::string es_input = es.substr(0, es.rfind('.') + 1);
  EXPECT_EQ(reason(*run(h, es_input + auth::base64UrlEncode(es_sig.substr(0, 63)))),
            "bad signature");
  EXPECT_EQ(reason(*run(h, es_input + auth::base64UrlEncode(es_sig + "x"))), "bad signature");
  EXPECT_EQ(reason(*run(h, es_input + auth::base64UrlEncode(es_sig))), "");
}

TEST_F(JwtAuthTest, MalformedTokens) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml());
  std::string good = rs256(claims());
  std::string sig = good.substr(good.rfind('.'));
  std::string b64_claims = auth::base64UrlEncode(claims().dump());
  std::string deep(20, '[');
  deep += std::string(20, ']');
  for (const std::string& token : std::vector<std::string>{
           "abc",
           "a.b",
           good + ".extra",
           "a.b.c.d.e",
           good.substr(0, good.find('.')) + "!" + good.substr(good.find('.')),  // bad base64url
           "eyJhbGciOiJSUzI1NiJ9=." + b64_claims + sig,                         // padding
           auth::base64UrlEncode("not json") + "." + b64_claims + sig,
           auth::base64UrlEncode("[\"RS256\"]") + "." + b64_claims + sig,
           auth::base64UrlEncode(R"({"alg":"RS256","alg":"HS256"})") + "." + b64_claims + sig,
           auth::base64UrlEncode(R"({"alg":"RS256","crit":["exp"]})") + "." + b64_claims + sig,
           auth::base64UrlEncode(R"({"alg":7})") + "." + b64_claims + sig,
           auth::base64UrlEncode(R"({"alg":"RS256","x":)" + deep + "}") + "." + b64_claims + sig,
       }) {
    EXPECT_EQ(reason(*run(h, token)), "malformed token") << token;
  }
  // Correctly signed but malformed claims.
  FilterHarness hs(sluice_plugin_entry(), "algorithms: [HS256]\nsecret: " + kSecret + "\n");
  for (const std::string& payload :
       std::vector<std::string>{"not json", "[1,2]", R"({"sub":"a","sub":"b","exp":1800000000})",
                                R"({"exp":1800000000,"x":)" + deep + "}"}) {
    EXPECT_EQ(reason(*run(hs, tj::signRawWithSecret(kSecret, R"({"alg":"HS256"})", payload))),
              "malformed token")
        << payload;
  }
  std::string nested =
      R"({"exp":1800000000,"x":)" + std::string(10, '[') + std::string(10, ']') + "}";
  EXPECT_EQ(reason(*run(hs, tj::signRawWithSecret(kSecret, R"({"alg":"HS256"})", nested))), "");
}

TEST_F(JwtAuthTest, HugeTokenIsRefusedBeforeParsing) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml());
  std::string huge = rs256(claims({{"pad", std::string(9000, 'x')}}));
  EXPECT_EQ(reason(*run(h, huge)), "token too large");
  FilterHarness big(sluice_plugin_entry(), jwksYaml("max_token_bytes: 20000\n"));
  EXPECT_EQ(reason(*run(big, huge)), "");
}

TEST_F(JwtAuthTest, ChallengeHeadersFollowRfc6750) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml("realm: api\n"));
  FakeStream missing("GET", "/");
  EXPECT_EQ(h.requestHeaders(missing), SLUICE_FILTER_STOP);
  EXPECT_EQ(reason(missing), "missing token");
  EXPECT_EQ(missing.replyHeader("WWW-Authenticate"), "Bearer realm=\"api\"");
  auto expired = run(h, rs256(claims({{"exp", kNow - 1000}})));
  EXPECT_EQ(last_status_, SLUICE_FILTER_STOP);
  EXPECT_EQ(expired->replyHeader("WWW-Authenticate"),
            "Bearer realm=\"api\", error=\"invalid_token\", error_description=\"token expired\"");
  // Nothing of the token in the reply.
  EXPECT_EQ(expired->local_reply->body.find("user-42"), std::string::npos);

  FilterHarness no_realm(sluice_plugin_entry(), jwksYaml());
  auto bad = run(no_realm, "x.y.z");
  EXPECT_EQ(bad->replyHeader("WWW-Authenticate"),
            "Bearer error=\"invalid_token\", error_description=\"malformed token\"");
  FakeStream basic("GET", "/", {{"Authorization", "Basic dXNlcjpwdw=="}});
  no_realm.requestHeaders(basic);
  EXPECT_EQ(reason(basic), "missing token");
  EXPECT_EQ(basic.replyHeader("WWW-Authenticate"), "Bearer");
  FakeStream empty("GET", "/", {{"Authorization", "Bearer"}});
  no_realm.requestHeaders(empty);
  EXPECT_EQ(reason(empty), "malformed token");
  FakeStream twice("GET", "/",
                   {{"Authorization", "Bearer " + rs256(claims())},
                    {"Authorization", "Bearer " + rs256(claims())}});
  no_realm.requestHeaders(twice);
  EXPECT_EQ(reason(twice), "malformed token");
}

TEST_F(JwtAuthTest, TokenFromQueryOrCustomHeader) {
  FilterHarness h(sluice_plugin_entry(), jwksYaml("query_param: access_token\n"));
  std::string token = rs256(claims());
  FakeStream q("GET", "/api?x=1&access_token=" + token);
  EXPECT_EQ(h.requestHeaders(q), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(q.context["consumer"], "user-42");
  FakeStream bad("GET", "/api?access_token=%zz");
  h.requestHeaders(bad);
  EXPECT_EQ(reason(bad), "malformed token");
  // The token is not forwarded in the request line (strip_credential, default on).
  FakeStream routed("GET", "/api?access_token=" + token + "&x=%20&y");
  routed.attributes[SLUICE_ATTR_UPSTREAM_PATH] = "/v1/api?access_token=" + token + "&x=%20&y";
  EXPECT_EQ(h.requestHeaders(routed), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(routed.attributes[SLUICE_ATTR_UPSTREAM_PATH], "/v1/api?x=%20&y");
  FilterHarness keep(sluice_plugin_entry(),
                     jwksYaml("query_param: access_token\nstrip_credential: false\n"));
  FakeStream kept("GET", "/api?access_token=" + token);
  kept.attributes[SLUICE_ATTR_UPSTREAM_PATH] = "/api?access_token=" + token;
  EXPECT_EQ(keep.requestHeaders(kept), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(kept.attributes[SLUICE_ATTR_UPSTREAM_PATH], "/api?access_token=" + token);

  FilterHarness custom(sluice_plugin_entry(),
                       jwksYaml("header: X-Token\nstrip_credential: false\nconsumer_claim: email\n"
                                "consumer_header: ''\n"));
  ASSERT_TRUE(custom.configured()) << custom.error();
  FakeStream c("GET", "/", {{"X-Token", rs256(claims({{"email", "u@example.com"}}))}});
  EXPECT_EQ(custom.requestHeaders(c), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(c.context["consumer"], "u@example.com");
  EXPECT_EQ(c.values(SLUICE_HEADERS_REQUEST, "X-Token").size(), 1u);
  EXPECT_TRUE(c.values(SLUICE_HEADERS_REQUEST, "X-Consumer").empty());
  FakeStream bearer_in_authorization("GET", "/", {{"Authorization", "Bearer " + token}});
  custom.requestHeaders(bearer_in_authorization);
  EXPECT_EQ(reason(bearer_in_authorization), "missing token");
}

}  // namespace
}  // namespace sluice::filters::jwt_testing
