// jwt_auth unit tests: RSA 2048 and P-256 keys generated here with OpenSSL, tokens signed here,
// the plugin driven through its C hook table over the fake host.
#include "filters/jwt_auth/jwt_auth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "filters/auth_common/auth_common.h"
#include "test/filters/jwt_auth/jwt_test_util.h"
#include "test/filters/testing/filter_harness.h"
#include "test/harness/env.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using Json = nlohmann::json;
using testing::FakeStream;
using testing::FilterHarness;
namespace tj = testing::jwt;

constexpr int64_t kNow = 1700000000;  // FakeStream's start_time_unix_us, in seconds
const std::string kSecret = "0123456789abcdef0123456789abcdef-hs256";
const std::string kOctSecret = "oct-key-from-the-jwks-file-32-bytes!";

// A file under the test's temporary directory (Bazel removes it).
class TempFile {
 public:
  explicit TempFile(const std::string& text) : path_(test::uniqueTmpPath("jwt")) {
    EXPECT_TRUE(test::writeFile(path_, text));
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class JwtAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    rsa_ = tj::generateRsa(2048).release();
    other_rsa_ = tj::generateRsa(2048).release();
    ec_ = tj::generateP256().release();
    Json jwks = {
        {"keys",
         {tj::publicJwk(rsa_, "rsa-1"),
          tj::publicJwk(ec_, "ec-1"),
          {{"kty", "oct"}, {"kid", "hs-1"}, {"k", auth::base64UrlEncode(kOctSecret)}},
          {{"kty", "OKP"}, {"kid", "ed-1"}, {"crv", "Ed25519"}, {"x", "AAAA"}},
          {{"kty", "RSA"}, {"kid", "enc-1"}, {"use", "enc"}, {"n", "AQAB"}, {"e", "AQAB"}}}}};
    jwks_ = new TempFile(jwks.dump(2));
    pem_ = new TempFile(tj::publicPem(rsa_));
  }
  static void TearDownTestSuite() {
    EVP_PKEY_free(rsa_);
    EVP_PKEY_free(other_rsa_);
    EVP_PKEY_free(ec_);
    delete jwks_;
    delete pem_;
  }

  static std::string jwksYaml(const std::string& extra = "") {
    return "algorithms: [RS256, ES256, HS256]\njwks_file: " + jwks_->path() + "\n" + extra;
  }
  static Json claims(Json extra = Json::object()) {
    Json c = {{"sub", "user-42"},
              {"iss", "https://idp.example"},
              {"aud", "api"},
              {"exp", kNow + 300},
              {"iat", kNow - 10}};
    for (auto& [k, v] : extra.items()) {
      if (v.is_null()) {
        c.erase(k);
      } else {
        c[k] = v;
      }
    }
    return c;
  }
  static std::string rs256(const Json& payload, const std::string& kid = "rsa-1") {
    Json header = {{"typ", "JWT"}};
    if (!kid.empty()) header["kid"] = kid;
    return tj::signWithKey(rsa_, header, payload);
  }

  // Runs one request with `Authorization: Bearer <token>`; returns the stream for inspection.
  std::unique_ptr<FakeStream> run(FilterHarness& h, const std::string& token,
                                  testing::Headers extra = {}) {
    testing::Headers headers = {{"Authorization", "Bearer " + token}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    auto s = std::make_unique<FakeStream>("GET", "/api", headers);
    last_status_ = h.requestHeaders(*s);
    return s;
  }
  // The 401 reason of `s`, or "" when it went through.
  static std::string reason(const FakeStream& s) {
    if (!s.local_reply) return "";
    EXPECT_EQ(s.local_reply->status, 401u);
    EXPECT_EQ(s.local_reply->content_type, "application/json");
    Json body = Json::parse(s.local_reply->body);
    EXPECT_EQ(body["error"], "unauthorized");
    return body["reason"].get<std::string>();
  }

  static inline EVP_PKEY* rsa_ = nullptr;
  static inline EVP_PKEY* other_rsa_ = nullptr;
  static inline EVP_PKEY* ec_ = nullptr;
  static inline TempFile* jwks_ = nullptr;
  static inline TempFile* pem_ = nullptr;
  sluice_filter_status last_status_ = SLUICE_FILTER_CONTINUE;
};

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
            "'keys/secret' is not an absolute path (plugin files are not resolved against the "
            "config file's directory; write the full path)"},
           {"algorithms: [HS256]\nsecret: " + kSecret + "\nforward_claims: [{claim: 'a b'}]\n",
            "claim names are 1..60 of [A-Za-z0-9_.-] (context key jwt.<claim>)"},
           {"algorithms: [HS256]\nsecret: " + kSecret +
                "\nforward_claims: [{claim: sub, header: x-consumer}]\n",
            "a claim header must differ from the token and consumer headers"},
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
}  // namespace sluice::filters
