// Shared fixture of jwt_auth's unit tests: RSA 2048 and P-256 keys generated once per suite
// with OpenSSL, a JWKS file (RSA, EC, oct, and two keys the filter skips) and a PEM file, and
// helpers that run one request through the plugin over the fake host.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "filters/auth_common/auth_common.h"
#include "filters/jwt_auth/jwt_auth.h"
#include "test/filters/jwt_auth/jwt_test_util.h"
#include "test/filters/testing/filter_harness.h"
#include "test/harness/env.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters::jwt_testing {

using Json = nlohmann::json;
using testing::FakeStream;
using testing::FilterHarness;
namespace tj = testing::jwt;

inline constexpr int64_t kNow = 1700000000;  // FakeStream's start_time_unix_us, in seconds
inline const std::string kSecret = "0123456789abcdef0123456789abcdef-hs256";
inline const std::string kOctSecret = "oct-key-from-the-jwks-file-32-bytes!";

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

}  // namespace sluice::filters::jwt_testing
