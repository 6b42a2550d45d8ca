// Routing: context-path stripping, explicit routes first, then the first segment as cluster.
#include "core/proxy/router.h"

#include <gtest/gtest.h>

namespace sluice::proxy {
namespace {

class RouterTest : public ::testing::Test {
 protected:
  RouterTest() {
    listener_.context_path = "/gateway";
    config::Route legacy;
    legacy.prefix = "/legacy/";
    legacy.cluster = "old";
    legacy.prefix_rewrite = "/";
    config::Route keep;
    keep.prefix = "/static";
    keep.cluster = "cdn";
    config_.routes = {legacy, keep};
  }
  bool go(const std::string& target) {
    result_ = RouteResult{};
    why_.clear();
    target_ = target;  // result_.cluster may point into it
    return route(config_, listener_, target_, &result_, &why_);
  }
  std::string target_;
  config::Config config_;
  config::Listener listener_;
  RouteResult result_;
  std::string why_;
};

TEST_F(RouterTest, FirstSegmentAfterContextPathNamesTheCluster) {
  ASSERT_TRUE(go("/gateway/restapi/users/7?x=1"));
  EXPECT_EQ(result_.cluster, "restapi");
  EXPECT_EQ(result_.upstream_path, "/restapi/users/7?x=1");
  ASSERT_TRUE(go("/gateway/restapi"));
  EXPECT_EQ(result_.cluster, "restapi");
  EXPECT_EQ(result_.upstream_path, "/restapi");
  ASSERT_TRUE(go("/gateway/restapi?q"));
  EXPECT_EQ(result_.cluster, "restapi");
}

TEST_F(RouterTest, PathsOutsideTheContextPathHaveNoRoute) {
  EXPECT_FALSE(go("/other/restapi/x"));
  EXPECT_FALSE(go("/gatewayx/restapi"));  // a prefix of a segment is not the context path
  EXPECT_FALSE(go("/gateway"));           // nothing left to name a cluster
  EXPECT_FALSE(go("/gateway/"));
  EXPECT_NE(why_, "");
}

TEST_F(RouterTest, ExplicitRoutesWinAndRewrite) {
  ASSERT_TRUE(go("/gateway/legacy/users/7"));
  EXPECT_EQ(result_.cluster, "old");
  EXPECT_EQ(result_.upstream_path, "/users/7");
  ASSERT_TRUE(go("/gateway/static/app.js"));
  EXPECT_EQ(result_.cluster, "cdn");
  EXPECT_EQ(result_.upstream_path, "/static/app.js");
}

TEST_F(RouterTest, NoContextPathRoutesTheWholePath) {
  listener_.context_path = "";
  ASSERT_TRUE(go("/restapi/x"));
  EXPECT_EQ(result_.cluster, "restapi");
  EXPECT_EQ(result_.upstream_path, "/restapi/x");
}

TEST_F(RouterTest, AbsoluteFormRoutesByItsPath) {
  ASSERT_TRUE(go("http://example.com/gateway/restapi/x"));
  EXPECT_EQ(result_.cluster, "restapi");
  EXPECT_EQ(result_.upstream_path, "/restapi/x");
  EXPECT_FALSE(go("*"));
  EXPECT_FALSE(go("example.com:443"));
}

TEST(DotSegmentTest, FindsDotAndDotDotSegmentsPlainOrPercentEncoded) {
  for (const char* t : {"/public/../admin",
                        "/public/./x",
                        "/..",
                        "/.",
                        "/a/..",
                        "/a/../",
                        "/a/%2e%2e/b",
                        "/a/%2E%2E/b",
                        "/a/.%2e/b",
                        "/a/%2e./b",
                        "/a/%2e/b",
                        "/a/..?x=1",
                        "/a/..#f",
                        "http://h/a/../b",
                        "https://h/..",
                        "/public#/../api",
                        "/public\\..\\api",
                        "/a/..;/b",
                        "/a/..;jsessionid=1/b",
                        "/a/.;x"}) {
    EXPECT_TRUE(hasDotSegment(t)) << t;
  }
}

TEST(DotSegmentTest, DotsInsideSegmentsAndInTheQueryAreFine) {
  for (const char* t : {"/", "/a", "/a..b", "/...", "/a/.well-known/x", "/file.tar.gz",
                        "/a/%2e%2e%2e", "/a/%2e%2f", "/a/%2", "/a/%", "/a?p=../../x", "/a?p=/./",
                        "*", "", "http://h", "/a//b", "/a;x=../b", "/a/..x;y", "/a/x#frag"}) {
    EXPECT_FALSE(hasDotSegment(t)) << t;
  }
}

}  // namespace
}  // namespace sluice::proxy
