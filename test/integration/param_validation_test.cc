// param_validation through the real binary: 400 listing every violation (query, headers, JSON
// body) without reaching the backend, valid requests proxied, and a validated JSON body forwarded
// byte for byte.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
plugin_paths: ${PLUGINS}
admin: { address: 127.0.0.1:${ADMIN} }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
      - name: param_validation
        config:
          query:
            page: {type: int, min: 1, max: 100}
            sort: {type: enum, values: [asc, desc]}
            q: {max_length: 5}
          headers:
            X-Tenant: {required: true, pattern: '^[a-z]+$'}
          body:
            max_bytes: 1024
            required: [name]
            fields:
              name: {type: string, max_length: 10}
              age: {type: integer, min: 0}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

class ParamValidationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"BACKEND", backend_->address()}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  // "in/name: reason" per violation of a 400 reply.
  static std::vector<std::string> violations(const Response& r) {
    std::vector<std::string> out;
    nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    if (!body.is_object() || !body["violations"].is_array()) {
      ADD_FAILURE() << "not a violations body: " << r.body;
      return out;
    }
    EXPECT_EQ(body["error"], "invalid request");
    for (const auto& v : body["violations"]) {
      out.push_back(v["in"].get<std::string>() + "/" + v["name"].get<std::string>() + ": " +
                    v["reason"].get<std::string>());
    }
    return out;
  }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
};

TEST_F(ParamValidationTest, InvalidQueryAndHeadersGet400ListingEveryViolation) {
  int64_t before = upstreamRequests(gateway_->adminPort());
  Response r = httpGet(gateway_->port(), "/gateway/echo/items?page=abc&sort=up&q=toolong+text");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(violations(r), (std::vector<std::string>{
                               "query/page: must be an integer",
                               "query/sort: must be one of: asc, desc",
                               "query/q: must be at most 5 bytes long",
                               "header/X-Tenant: is required",
                           }));
  EXPECT_EQ(upstreamRequests(gateway_->adminPort()), before) << "an invalid request went upstream";
}

TEST_F(ParamValidationTest, ValidRequestIsProxied) {
  Response r = httpGet(gateway_->port(), "/gateway/echo/items?page=7&sort=desc&q=a+b",
                       {{"X-Tenant", "acme"}});
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(echoString(r.body, "path"), "/echo/items?page=7&sort=desc&q=a+b");
}

TEST_F(ParamValidationTest, ValidJsonBodyIsForwardedIntact) {
  std::string body = R"({"name": "Zoë", "age": 42, "extra": [1, 2, {"k": "v"}]})";
  Response r = httpRequest(gateway_->port(), "POST", "/gateway/echo/users",
                           {{"X-Tenant", "acme"}, {"Content-Type", "application/json"}}, body);
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(echoNumber(r.body, "body_length"), static_cast<int64_t>(body.size()));
  EXPECT_EQ(echoString(r.body, "body_fnv1a"), hex8(fnv1a(body)));
}

TEST_F(ParamValidationTest, InvalidJsonBodyViolationsJoinTheQueryOnes) {
  int64_t before = upstreamRequests(gateway_->adminPort());
  Response r = httpRequest(gateway_->port(), "POST", "/gateway/echo/users?page=0",
                           {{"X-Tenant", "acme"}, {"Content-Type", "application/json"}},
                           R"({"name": "far too long a name", "age": -3})");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(violations(r), (std::vector<std::string>{
                               "query/page: must be at least 1",
                               "body/name: must be at most 10 characters long",
                               "body/age: must be at least 0",
                           }));
  Response broken =
      httpRequest(gateway_->port(), "POST", "/gateway/echo/users",
                  {{"X-Tenant", "acme"}, {"Content-Type", "application/json"}}, R"({"name": )");
  EXPECT_EQ(broken.status, 400);
  EXPECT_EQ(violations(broken).size(), 1u);
  EXPECT_EQ(upstreamRequests(gateway_->adminPort()), before);
}

TEST_F(ParamValidationTest, NonJsonBodyIs415AndOversizedBodyIs413) {
  Response text = httpRequest(gateway_->port(), "POST", "/gateway/echo/users",
                              {{"X-Tenant", "acme"}, {"Content-Type", "text/plain"}}, "name=x");
  ASSERT_TRUE(text.complete) << text.error;
  EXPECT_EQ(text.status, 415);
  EXPECT_EQ(text.header("Content-Type"), "application/json");
  Response big = httpRequest(gateway_->port(), "POST", "/gateway/echo/users",
                             {{"X-Tenant", "acme"}, {"Content-Type", "application/json"}},
                             "{\"name\": \"" + std::string(2000, 'x') + "\"}");
  ASSERT_TRUE(big.complete) << big.error;
  EXPECT_EQ(big.status, 413);
}

TEST_F(ParamValidationTest, BadRuleIsRefusedAtLoadWithItsLine) {
  TempConfig config("plugin_paths: " + pluginPathsYaml() +
                    "\nlisteners:\n  - name: edge\n    address: 127.0.0.1:1\n    filters:\n"
                    "      - name: param_validation\n        config:\n          query:\n"
                    "            page: {type: int, min: 10, max: 1}\nclusters: []\n");
  Process p({runfile("core/sluice"), "-c", config.path(), "--validate", "--no-bind-check"}, {},
            "sluice-validate");
  EXPECT_NE(p.waitExit(15000), 0);
  EXPECT_NE(p.outputTail().find("sluice.yaml:9:"), std::string::npos) << p.outputTail();
  EXPECT_NE(p.outputTail().find("max 1 is less than min 10"), std::string::npos) << p.outputTail();
}

}  // namespace
}  // namespace sluice::test
