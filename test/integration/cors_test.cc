// cors through the real binary: preflights answered by the gateway (never sent upstream) with the
// CORS headers or 403, actual requests' responses carrying Access-Control-Allow-Origin, and
// requests without Origin left alone.
#include <gtest/gtest.h>

#include <memory>
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
      - name: cors
        config:
          allow_origins: [https://app.example.com, "https://*.example.org"]
          allow_methods: [GET, POST, PUT]
          allow_headers: [Content-Type, X-Api-Key]
          expose_headers: [X-Backend]
          max_age: 600
          allow_credentials: true
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

class CorsTest : public ::testing::Test {
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

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
};

TEST_F(CorsTest, PreflightIsAnsweredWith204AndNeverGoesUpstream) {
  int64_t before = upstreamRequests(gateway_->adminPort());
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(
      conn.send(buildRequest("OPTIONS", "/gateway/echo/items",
                             {{"Origin", "https://app.example.com"},
                              {"Access-Control-Request-Method", "PUT"},
                              {"Access-Control-Request-Headers", "content-type, x-api-key"}},
                             "", gateway_->port())));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.header("Access-Control-Allow-Origin"), "https://app.example.com");
  EXPECT_EQ(r.header("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(r.header("Access-Control-Allow-Methods"), "GET, POST, PUT");
  EXPECT_EQ(r.header("Access-Control-Allow-Headers"), "content-type, x-api-key");
  EXPECT_EQ(r.header("Access-Control-Max-Age"), "600");
  EXPECT_NE(r.header("Vary").find("Origin"), std::string::npos) << r.header("Vary");
  EXPECT_EQ(upstreamRequests(gateway_->adminPort()), before);
}

// A browser sends the actual request right after the preflight, usually on the same connection:
// the 204 must not cost it (a local reply to a completely read request keeps the connection).
TEST_F(CorsTest, PreflightKeepsTheConnectionForTheActualRequest) {
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.send(buildRequest(
      "OPTIONS", "/gateway/echo/items",
      {{"Origin", "https://app.example.com"}, {"Access-Control-Request-Method", "PUT"}}, "",
      gateway_->port())));
  Response pre = conn.readResponse();
  ASSERT_TRUE(pre.complete) << pre.error;
  EXPECT_EQ(pre.status, 204);
  EXPECT_TRUE(pre.keep_alive) << "Connection: " << pre.header("Connection");
  ASSERT_TRUE(conn.send(
      buildRequest("PUT", "/gateway/echo/items",
                   {{"Origin", "https://app.example.com"}, {"Content-Type", "application/json"}},
                   "{}", gateway_->port())));
  Response actual = conn.readResponse();
  ASSERT_TRUE(actual.complete) << actual.error;
  EXPECT_EQ(actual.status, 200);
  EXPECT_EQ(actual.header("Access-Control-Allow-Origin"), "https://app.example.com");
  EXPECT_EQ(echoNumber(actual.body, "body_length"), 2);
}

TEST_F(CorsTest, DisallowedPreflightsGet403WithoutCorsHeaders) {
  for (const Headers& h : std::vector<Headers>{
           {{"Origin", "https://evil.example.com"}, {"Access-Control-Request-Method", "GET"}},
           {{"Origin", "https://app.example.com"}, {"Access-Control-Request-Method", "DELETE"}},
           {{"Origin", "https://app.example.com"},
            {"Access-Control-Request-Method", "POST"},
            {"Access-Control-Request-Headers", "x-secret"}},
       }) {
    Response r = httpRequest(gateway_->port(), "OPTIONS", "/gateway/echo/items", h);
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 403) << h[0].second << " " << h[1].second;
    EXPECT_EQ(r.header("Content-Type"), "application/json");
    EXPECT_EQ(r.headerCount("Access-Control-Allow-Origin"), 0u);
  }
}

TEST_F(CorsTest, ActualRequestGetsAllowOriginAndVary) {
  Response r =
      httpGet(gateway_->port(), "/gateway/echo/items", {{"Origin", "https://a.example.org"}});
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(echoString(r.body, "backend"), "echo");
  EXPECT_EQ(echoHeaderValues(r.body, "Origin"), std::vector<std::string>{"https://a.example.org"});
  EXPECT_EQ(r.header("Access-Control-Allow-Origin"), "https://a.example.org");
  EXPECT_EQ(r.header("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(r.header("Access-Control-Expose-Headers"), "X-Backend");
  EXPECT_EQ(r.header("Vary"), "Origin");
}

TEST_F(CorsTest, DisallowedOriginIsProxiedWithoutAllowOrigin) {
  Response r =
      httpGet(gateway_->port(), "/gateway/echo/items", {{"Origin", "https://example.org"}});
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headerCount("Access-Control-Allow-Origin"), 0u);
  EXPECT_EQ(r.header("Vary"), "Origin");
}

TEST_F(CorsTest, RequestsWithoutOriginPassUntouched) {
  Response r = httpGet(gateway_->port(), "/gateway/echo/items");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headerCount("Access-Control-Allow-Origin"), 0u);
  EXPECT_EQ(r.headerCount("Vary"), 0u);
  // An OPTIONS without Origin is not a preflight: it goes upstream.
  Response options = httpRequest(gateway_->port(), "OPTIONS", "/gateway/echo/items",
                                 {{"Access-Control-Request-Method", "PUT"}});
  ASSERT_TRUE(options.complete) << options.error;
  EXPECT_EQ(options.status, 200);
  EXPECT_EQ(echoString(options.body, "method"), "OPTIONS");
}

TEST_F(CorsTest, StarWithCredentialsIsRefusedAtLoad) {
  TempConfig config("plugin_paths: " + pluginPathsYaml() +
                    "\nlisteners:\n  - name: edge\n    address: 127.0.0.1:1\n    filters:\n"
                    "      - name: cors\n        config:\n          allow_credentials: true\n"
                    "          allow_origins: ['*']\nclusters: []\n");
  Process p({runfile("core/sluice"), "-c", config.path(), "--validate", "--no-bind-check"}, {},
            "sluice-validate");
  EXPECT_NE(p.waitExit(15000), 0);
  EXPECT_NE(p.outputTail().find("sluice.yaml:9:"), std::string::npos) << p.outputTail();
  EXPECT_NE(p.outputTail().find("allow_origins '*' with allow_credentials"), std::string::npos)
      << p.outputTail();
}

}  // namespace
}  // namespace sluice::test
