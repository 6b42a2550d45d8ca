// Routing through the real binary: context-path stripping, explicit routes with prefix_rewrite,
// 404s for paths outside the context path and for unknown clusters, query strings preserved.
#include <gtest/gtest.h>

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
routes:
  - prefix: /restapi/special/
    cluster: other
    prefix_rewrite: /v2/
  - prefix: /legacy/
    cluster: restapi
    prefix_rewrite: /
  - prefix: /keep/
    cluster: other
clusters:
  - name: restapi
    endpoints: [${RESTAPI}]
  - name: other
    endpoints: [${OTHER}]
)";

class RoutingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    restapi_ = new EchoBackend("restapi-backend");
    other_ = new EchoBackend("other-backend");
    gateway_ =
        new Gateway(kConfig, {{"RESTAPI", restapi_->address()}, {"OTHER", other_->address()}});
  }
  static void TearDownTestSuite() {
    delete gateway_;
    delete other_;
    delete restapi_;
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  // GET `path` through sluice; expects a 200 from a backend and returns its echo body.
  static Response get(const std::string& path) { return httpGet(gateway_->port(), path); }

  static EchoBackend* restapi_;
  static EchoBackend* other_;
  static Gateway* gateway_;
};

EchoBackend* RoutingTest::restapi_ = nullptr;
EchoBackend* RoutingTest::other_ = nullptr;
Gateway* RoutingTest::gateway_ = nullptr;

TEST_F(RoutingTest, ContextPathIsStrippedAndFirstSegmentNamesTheCluster) {
  Response r = get("/gateway/restapi/users/7");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("X-Backend"), "restapi-backend");
  EXPECT_EQ(echoString(r.body, "path"), "/restapi/users/7");
  EXPECT_EQ(echoString(r.body, "method"), "GET");

  Response other = get("/gateway/other/a/b/c");
  ASSERT_TRUE(other.complete) << other.error;
  EXPECT_EQ(other.header("X-Backend"), "other-backend");
  EXPECT_EQ(echoString(other.body, "path"), "/other/a/b/c");
}

TEST_F(RoutingTest, ClusterNameAloneIsRoutable) {
  Response r = get("/gateway/restapi");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(echoString(r.body, "path"), "/restapi");
  EXPECT_EQ(r.header("X-Backend"), "restapi-backend");
}

TEST_F(RoutingTest, ExplicitRouteWinsOverClusterSegmentAndRewritesPrefix) {
  // "/restapi/..." would name cluster restapi, but the explicit route sends it to "other".
  Response r = get("/gateway/restapi/special/thing");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("X-Backend"), "other-backend");
  EXPECT_EQ(echoString(r.body, "path"), "/v2/thing");

  // A path that does not match the route's prefix falls back to context-path routing.
  Response fallback = get("/gateway/restapi/specialist");
  ASSERT_TRUE(fallback.complete) << fallback.error;
  EXPECT_EQ(fallback.header("X-Backend"), "restapi-backend");
  EXPECT_EQ(echoString(fallback.body, "path"), "/restapi/specialist");
}

TEST_F(RoutingTest, PrefixRewriteToRoot) {
  Response r = get("/gateway/legacy/users/7");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("X-Backend"), "restapi-backend");
  EXPECT_EQ(echoString(r.body, "path"), "/users/7");
}

TEST_F(RoutingTest, RouteWithoutRewriteKeepsThePath) {
  Response r = get("/gateway/keep/x/y");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("X-Backend"), "other-backend");
  EXPECT_EQ(echoString(r.body, "path"), "/keep/x/y");
}

TEST_F(RoutingTest, QueryStringsArePreserved) {
  Response r = get("/gateway/restapi/search?q=a%20b&x=1&empty=");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(echoString(r.body, "path"), "/restapi/search?q=a%20b&x=1&empty=");

  Response rewritten = get("/gateway/legacy/users?id=7&sort=desc");
  ASSERT_TRUE(rewritten.complete) << rewritten.error;
  EXPECT_EQ(echoString(rewritten.body, "path"), "/users?id=7&sort=desc");

  Response bare = get("/gateway/restapi?x=1");
  ASSERT_TRUE(bare.complete) << bare.error;
  EXPECT_EQ(bare.header("X-Backend"), "restapi-backend");
  EXPECT_EQ(echoString(bare.body, "path"), "/restapi?x=1");
}

TEST_F(RoutingTest, PathOutsideTheContextPathIs404Json) {
  for (const char* path : {"/restapi/users/7", "/gatewayx/restapi/x", "/", "/other/gateway/x"}) {
    Response r = get(path);
    EXPECT_TRUE(isJsonError(r, 404)) << path;
    EXPECT_EQ(r.header("X-Backend"), "") << path << " must not reach a backend";
  }
}

TEST_F(RoutingTest, UnknownClusterIs404Json) {
  Response r = get("/gateway/nosuchcluster/x");
  EXPECT_TRUE(isJsonError(r, 404));
  EXPECT_NE(r.body.find("nosuchcluster"), std::string::npos) << r.body;
  EXPECT_EQ(r.header("X-Backend"), "");

  Response empty_segment = get("/gateway/");
  EXPECT_TRUE(isJsonError(empty_segment, 404));
}

TEST_F(RoutingTest, NotFoundKeepsOtherRequestsWorking) {
  // A 404 closes its own connection only; the next request routes normally.
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/nosuch/x", {}, "", gateway_->port())));
  EXPECT_TRUE(isJsonError(conn.readResponse(), 404));
  EXPECT_TRUE(conn.isClosed(2000));
  Response ok = get("/gateway/restapi/after");
  ASSERT_TRUE(ok.complete) << ok.error;
  EXPECT_EQ(ok.status, 200);
}

}  // namespace
}  // namespace sluice::test
