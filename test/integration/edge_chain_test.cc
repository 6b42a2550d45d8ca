// The edge filters together, as an operator would chain them: cors first (its preflight answer
// comes before everything, and the later filters' local replies still get CORS headers), then
// ip_filter on the listener, and param_validation per route (routes[].filters) with each route's
// own rules.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
plugin_paths: ${PLUGINS}
admin: { address: 127.0.0.1:${ADMIN} }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: cors
        config:
          allow_origins: [https://app.example.com]
          allow_methods: [GET, POST]
          allow_headers: [Content-Type]
      - name: ip_filter
        config:
          deny: [203.0.113.0/24]
          trusted_xff_depth: 1
          on_invalid_xff: peer
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - name: items
    prefix: /items
    cluster: echo
    filters:
      - name: param_validation
        config:
          query:
            page: {type: int, min: 1}
  - name: users
    prefix: /users
    cluster: echo
    filters:
      - name: param_validation
        config:
          body:
            required: [name]
            fields:
              name: {type: string}
  - name: open
    prefix: /open
    cluster: echo
    filters:
      - {name: ip_filter, disabled: true}
)";

class EdgeChainTest : public ::testing::Test {
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

  static std::vector<std::string> violations(const Response& r) {
    std::vector<std::string> out;
    nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    if (!body.is_object() || !body["violations"].is_array()) {
      ADD_FAILURE() << "not a violations body: " << r.body;
      return out;
    }
    for (const auto& v : body["violations"]) {
      out.push_back(v["in"].get<std::string>() + "/" + v["name"].get<std::string>() + ": " +
                    v["reason"].get<std::string>());
    }
    return out;
  }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
};

constexpr char kOrigin[] = "https://app.example.com";

TEST_F(EdgeChainTest, EachRouteValidatesWithItsOwnRules) {
  Response bad = httpGet(gateway_->port(), "/items?page=0");
  ASSERT_TRUE(bad.complete) << bad.error;
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(violations(bad), std::vector<std::string>{"query/page: must be at least 1"});
  EXPECT_EQ(httpGet(gateway_->port(), "/items?page=2").status, 200);
  // /users has body rules only; /open has no param_validation at all.
  EXPECT_EQ(httpGet(gateway_->port(), "/users?page=0").status, 200);
  EXPECT_EQ(httpGet(gateway_->port(), "/open/items?page=0").status, 200);

  Headers json = {{"Content-Type", "application/json"}};
  Response missing = httpRequest(gateway_->port(), "POST", "/users", json, "{}");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(violations(missing), std::vector<std::string>{"body/name: is required"});
  std::string body = R"({"name":"Ann"})";
  Response ok = httpRequest(gateway_->port(), "POST", "/users", json, body);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(echoString(ok.body, "body_fnv1a"), hex8(fnv1a(body)));
}

TEST_F(EdgeChainTest, LaterFiltersLocalRepliesCarryCorsHeaders) {
  Response bad = httpGet(gateway_->port(), "/items?page=x", {{"Origin", kOrigin}});
  ASSERT_TRUE(bad.complete) << bad.error;
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.header("Access-Control-Allow-Origin"), kOrigin) << "the page can read the 400";
  Response denied = httpGet(gateway_->port(), "/items?page=1",
                            {{"Origin", kOrigin}, {"X-Forwarded-For", "203.0.113.9"}});
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.header("Access-Control-Allow-Origin"), kOrigin);
}

TEST_F(EdgeChainTest, IpFilterOnTheListenerAndDisabledOnARoute) {
  EXPECT_EQ(httpGet(gateway_->port(), "/items?page=1").status, 200);  // no XFF: the peer
  EXPECT_EQ(httpGet(gateway_->port(), "/items?page=1", {{"X-Forwarded-For", "203.0.113.9"}}).status,
            403);
  EXPECT_EQ(
      httpGet(gateway_->port(), "/items?page=1", {{"X-Forwarded-For", "198.51.100.1"}}).status,
      200);
  EXPECT_EQ(httpGet(gateway_->port(), "/open/x", {{"X-Forwarded-For", "203.0.113.9"}}).status, 200);
}

// cors runs first: a preflight is answered before ip_filter or a route's validation sees it
// (browsers send preflights without credentials or the real query's body); the actual request
// then meets every filter.
TEST_F(EdgeChainTest, PreflightIsAnsweredBeforeTheOtherFilters) {
  Response pre = httpRequest(gateway_->port(), "OPTIONS", "/users",
                             {{"Origin", kOrigin},
                              {"Access-Control-Request-Method", "POST"},
                              {"Access-Control-Request-Headers", "content-type"},
                              {"X-Forwarded-For", "203.0.113.9"}});
  ASSERT_TRUE(pre.complete) << pre.error;
  EXPECT_EQ(pre.status, 204);
  EXPECT_EQ(pre.header("Access-Control-Allow-Origin"), kOrigin);
  EXPECT_EQ(pre.header("Access-Control-Allow-Headers"), "content-type");
}

}  // namespace
}  // namespace sluice::test
