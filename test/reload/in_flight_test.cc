// In-flight requests finish on the snapshot they started with: a slow request survives a reload
// that removes its cluster or changes its balancer, and a keep-alive connection serves requests
// before and after a reload on the same socket (the new config from its next request on).
#include <gtest/gtest.h>

#include "test/reload/reload_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
clusters:
  - name: svc
    balancer: { name: ${BALANCER} }
    endpoints: [${SVC}]
${SLOW}
)";

constexpr char kSlowCluster[] = R"(
  - name: slow
    endpoints: [${A}]
)";

class InFlightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gateway_ = std::make_unique<ReloadGateway>(kConfig, vars("round_robin", a_, true));
    ASSERT_TRUE(gateway_->ready());
  }

  std::map<std::string, std::string> vars(const std::string& balancer, EchoBackend& svc,
                                          bool slow) {
    return {{"BALANCER", balancer},
            {"SVC", svc.address()},
            {"A", a_.address()},
            {"SLOW", slow ? substitute(kSlowCluster, {{"A", a_.address()}}) : ""}};
  }

  // Sends a slow request on a fresh connection and waits until sluice has it in flight
  // upstream (the cluster's active_requests).
  std::unique_ptr<RawConnection> startSlow(const std::string& cluster, int delay_ms) {
    auto conn = std::make_unique<RawConnection>(gateway_->port(), 20000);
    EXPECT_TRUE(conn->send(buildRequest("GET", "/" + cluster + "/delay/" + std::to_string(delay_ms),
                                        {}, "", gateway_->port())));
    for (int i = 0; i < 250; ++i) {
      ClusterStat c = clusterStat(gateway_->adminPort(), cluster);
      if (!c.hosts.empty() && c.hosts[0].active == 1) return conn;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the slow request never reached the upstream";
    return conn;
  }

  EchoBackend a_{"a"};
  EchoBackend b_{"b"};
  std::unique_ptr<ReloadGateway> gateway_;
};

TEST_F(InFlightTest, SlowRequestSurvivesTheRemovalOfItsCluster) {
  auto slow = startSlow("slow", 1500);
  ASSERT_TRUE(gateway_->rewrite(kConfig, vars("round_robin", a_, false)));
  ASSERT_NE(gateway_->reload(Trigger::kSighup), 0u);
  EXPECT_FALSE(clusterStat(gateway_->adminPort(), "slow").found);
  EXPECT_EQ(httpGet(gateway_->port(), "/slow/x").status, 404) << "new requests see the new config";

  Response r = slow->readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("X-Backend"), "a");
  EXPECT_NE(r.body.find("\"path\": \"/slow/delay/1500\""), std::string::npos) << r.body;
  // The connection is still good for the next request, which routes with the new config.
  ASSERT_TRUE(slow->send(buildRequest("GET", "/slow/y", {}, "", gateway_->port())));
  EXPECT_EQ(slow->readResponse().status, 404);
  EXPECT_TRUE(gateway_->process().running());
}

TEST_F(InFlightTest, SlowRequestSurvivesABalancerChange) {
  auto slow = startSlow("svc", 1500);
  ASSERT_TRUE(gateway_->rewrite(kConfig, vars("random", a_, true)));
  ASSERT_NE(gateway_->reload(Trigger::kAdmin), 0u);
  EXPECT_EQ(clusterStat(gateway_->adminPort(), "svc").balancer, "random");
  Response r = slow->readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.keep_alive);
  // The host's in-flight count went back to zero on the host the new snapshot uses.
  ClusterStat c = clusterStat(gateway_->adminPort(), "svc");
  ASSERT_EQ(c.hosts.size(), 1u);
  EXPECT_EQ(c.hosts[0].active, 0u);
}

TEST_F(InFlightTest, KeepAliveConnectionServesBeforeAndAfterReloads) {
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.connected());
  auto get = [&](const std::string& path) {
    EXPECT_TRUE(conn.send(buildRequest("GET", path, {}, "", gateway_->port())));
    return conn.readResponse();
  };
  Response before = get("/svc/1");
  ASSERT_EQ(before.status, 200) << before.error;
  EXPECT_EQ(before.header("X-Backend"), "a");

  // Endpoints of svc move from a to b; then back; the same socket sees each change.
  int n = 0;
  for (EchoBackend* target : {&b_, &a_, &b_}) {
    ASSERT_TRUE(gateway_->rewrite(kConfig, vars("round_robin", *target, true)));
    ASSERT_NE(gateway_->reload(++n % 2 == 1 ? Trigger::kAdmin : Trigger::kSighup), 0u);
    Response after = get("/svc/" + std::to_string(n));
    ASSERT_TRUE(after.complete) << after.error;
    EXPECT_EQ(after.status, 200);
    EXPECT_TRUE(after.keep_alive);
    EXPECT_EQ(after.header("X-Backend"), target == &a_ ? "a" : "b");
  }
  EXPECT_FALSE(conn.isClosed(100));
}

}  // namespace
}  // namespace sluice::test
