// Filter plugins loaded by the real binary from their .so files, observed end to end: what the
// backend receives and what the client gets, for proxied and for locally generated responses.
#include <gtest/gtest.h>

#include <memory>
#include <regex>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
      - request_id
      - name: headers
        config:
          request:
            remove: [X-Internal-Debug]
            set: { X-Gateway: sluice }
            add: { Via: 1.1 sluice }
          response:
            set: { Cache-Control: no-store }
            add: { X-Served-By: sluice }
clusters:
  - name: echo
    endpoints: [${BACKEND}]
  - name: dead
    retries: 0
    endpoints: [${DEAD}]
)";

const std::regex kUuidV4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");

class PluginsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    dead_ = std::make_unique<DeadPort>();
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"BACKEND", backend_->address()},
                                                    {"DEAD", dead_->address()}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
    dead_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<DeadPort> dead_;
  static inline std::unique_ptr<Gateway> gateway_;
};

TEST_F(PluginsTest, RequestIdIsGeneratedSentUpstreamAndEchoed) {
  Response r = httpGet(gateway_->port(), "/gateway/echo/x");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  std::vector<std::string> upstream = echoHeaderValues(r.body, "X-Request-Id");
  ASSERT_EQ(upstream.size(), 1u) << r.body;
  EXPECT_TRUE(std::regex_match(upstream[0], kUuidV4)) << upstream[0];
  EXPECT_EQ(r.header("X-Request-Id"), upstream[0]);

  Response again = httpGet(gateway_->port(), "/gateway/echo/x");
  EXPECT_NE(again.header("X-Request-Id"), upstream[0]) << "ids repeat";
}

TEST_F(PluginsTest, IncomingRequestIdIsKept) {
  Response r = httpGet(gateway_->port(), "/gateway/echo/x", {{"X-Request-Id", "client-id-42"}});
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(echoHeaderValues(r.body, "X-Request-Id"), std::vector<std::string>{"client-id-42"});
  EXPECT_EQ(r.header("X-Request-Id"), "client-id-42");
}

TEST_F(PluginsTest, HeadersFilterEditsRequestHeaders) {
  Response r =
      httpGet(gateway_->port(), "/gateway/echo/x",
              {{"X-Internal-Debug", "1"}, {"X-Gateway", "spoofed"}, {"Via", "1.0 client"}});
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_TRUE(echoHeaderValues(r.body, "X-Internal-Debug").empty()) << r.body;
  EXPECT_EQ(echoHeaderValues(r.body, "X-Gateway"), std::vector<std::string>{"sluice"});
  EXPECT_EQ(echoHeaderValues(r.body, "Via"),
            (std::vector<std::string>{"1.0 client", "1.1 sluice"}));
}

TEST_F(PluginsTest, HeadersFilterEditsResponseHeaders) {
  Response r = httpGet(gateway_->port(), "/gateway/echo/x");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.header("Cache-Control"), "no-store");
  EXPECT_EQ(r.header("X-Served-By"), "sluice");
  EXPECT_EQ(r.header("X-Backend"), "echo");
}

TEST_F(PluginsTest, FiltersSeeGatewayErrorReplies) {
  Response r = httpGet(gateway_->port(), "/gateway/dead/x");
  EXPECT_TRUE(isJsonError(r, 502));
  EXPECT_EQ(r.header("X-Served-By"), "sluice");
  EXPECT_TRUE(std::regex_match(r.header("X-Request-Id"), kUuidV4)) << r.header("X-Request-Id");
}

TEST_F(PluginsTest, FiltersSeeNotFoundRepliesToo) {
  Response r = httpGet(gateway_->port(), "/gateway/nosuchcluster/x");
  EXPECT_TRUE(isJsonError(r, 404));
  EXPECT_EQ(r.header("X-Served-By"), "sluice");
  EXPECT_TRUE(std::regex_match(r.header("X-Request-Id"), kUuidV4)) << r.header("X-Request-Id");
}

TEST_F(PluginsTest, FiltersApplyToEveryPipelinedRequest) {
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/1", {}, "", 1) +
                        buildRequest("GET", "/gateway/echo/2", {}, "", 1)));
  Response a = conn.readResponse();
  Response b = conn.readResponse();
  ASSERT_TRUE(a.complete && b.complete) << a.error << b.error;
  EXPECT_EQ(a.header("X-Served-By"), "sluice");
  EXPECT_EQ(b.header("X-Served-By"), "sluice");
  EXPECT_NE(a.header("X-Request-Id"), b.header("X-Request-Id"));
}

}  // namespace
}  // namespace sluice::test
