// Found by trying to break the gateway from outside (findings/1-dot-segment-route-bypass,
// findings/2-expect-continue-desync): a filter chain that depends on the route must not be
// escapable with dot segments in the path, and a filter's local reply to a request that
// announced Expect: 100-continue must not leave the connection in an ambiguous state.
#include <gtest/gtest.h>

#include <memory>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

// `deny` plays an auth filter: every request with X-Deny is refused (403) unless its route
// disables the filter, as a public route would disable an auth filter.
constexpr char kConfig[] = R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters: [{name: deny, path: '${DENY}'}]
routes:
  - name: public
    prefix: /public
    cluster: echo
    filters:
      - { name: deny, disabled: true }
  - name: api
    prefix: /api
    cluster: echo
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

class LocalReplyFramingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{
                     {"BACKEND", backend_->address()},
                     {"DENY", runfile("test/integration/fixtures/libdeny.so")}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
};

TEST_F(LocalReplyFramingTest, PublicRouteSkipsTheFilterAndOtherRoutesRunIt) {
  EXPECT_EQ(httpGet(gateway_->port(), "/public/x", {{"X-Deny", "1"}}).status, 200);
  EXPECT_EQ(httpGet(gateway_->port(), "/api/x", {{"X-Deny", "1"}}).status, 403);
}

TEST_F(LocalReplyFramingTest, DotSegmentsCannotLeaveThePublicRoute) {
  // Each of these matched the /public prefix and went upstream as it was: a backend that
  // removes dot segments served /api/x without the filter.
  for (const char* path :
       {"/public/../api/x", "/public/./../api/x", "/public/%2e%2e/api/x", "/public/%2E./api/x",
        "/public/.%2e/api/x", "/public/..", "/public/../api/x?a=b", "/public/./x",
        "/public/..;/api/x", "/public#/../api/x", "http://h/public/../api/x"}) {
    RawConnection conn(gateway_->port());
    ASSERT_TRUE(conn.connected());
    ASSERT_TRUE(conn.send(buildRequest("GET", path, {{"X-Deny", "1"}}, "", gateway_->port())));
    Response r = conn.readResponse();
    EXPECT_EQ(r.status, 400) << path;
  }
  // Dots inside a segment are ordinary characters.
  EXPECT_EQ(httpGet(gateway_->port(), "/public/a..b/.well-known/x.json").status, 200);
  EXPECT_EQ(httpGet(gateway_->port(), "/public/...", {}).status, 200);
}

TEST_F(LocalReplyFramingTest, ReplyBeforeTheBodyKeepsTheConnectionForAPipelinedRequest) {
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(
      conn.send("POST /api/x HTTP/1.1\r\nHost: a\r\nX-Deny: 1\r\nContent-Length: 10\r\n\r\n"
                "0123456789GET /public/next HTTP/1.1\r\nHost: a\r\n\r\n"));
  Response denied = conn.readResponse();
  EXPECT_EQ(denied.status, 403);
  EXPECT_TRUE(denied.keep_alive);
  Response next = conn.readResponse();
  EXPECT_EQ(next.status, 200);
  EXPECT_NE(next.body.find("/public/next"), std::string::npos) << next.body;
}

TEST_F(LocalReplyFramingTest, ReplyToExpectContinueWithoutTheBodyClosesTheConnection) {
  // No 100 Continue was sent, so the client may or may not send the 10 bytes: a client that
  // does not, and sends its next request instead, had that request's first 10 bytes read as
  // the body (and got a 400 for the rest).
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(
      conn.send("POST /api/x HTTP/1.1\r\nHost: a\r\nX-Deny: 1\r\nContent-Length: 10\r\n"
                "Expect: 100-continue\r\n\r\n"));
  Response denied = conn.readResponse();
  EXPECT_EQ(denied.status, 403);
  EXPECT_FALSE(denied.keep_alive);
  EXPECT_EQ(denied.header("Connection"), "close");
  EXPECT_TRUE(conn.isClosed(10000));
}

}  // namespace
}  // namespace sluice::test
