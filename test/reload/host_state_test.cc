// Host state outlives a policy swap: per-host request totals keep growing instead of restarting,
// an in-flight count taken before the swap is released on the same host afterwards (never left
// at 1 or wrapped below 0), health is kept, and pooled upstream connections are reused (no new
// upstream connection after a balancer-only reload).
#include <gtest/gtest.h>

#include "test/reload/reload_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
clusters:
  - name: svc
    balancer: { name: ${BALANCER} }
    endpoints: [${A}, ${B}, ${C}]
)";

constexpr const char* kPolicies[] = {"least_active", "p2c",    "ring_hash",
                                     "maglev",       "random", "round_robin"};

class HostStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gateway_ = std::make_unique<ReloadGateway>(kConfig, vars("round_robin"));
    ASSERT_TRUE(gateway_->ready());
  }
  std::map<std::string, std::string> vars(const std::string& balancer) {
    return {{"BALANCER", balancer}, {"A", a_.address()}, {"B", b_.address()}, {"C", c_.address()}};
  }
  // `n` requests one after the other on one keep-alive connection.
  void send(int n) {
    RawConnection conn(gateway_->port());
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(
          conn.send(buildRequest("GET", "/svc/" + std::to_string(i), {}, "", gateway_->port())));
      Response r = conn.readResponse();
      ASSERT_EQ(r.status, 200) << r.error;
    }
  }
  EchoBackend a_{"a"}, b_{"b"}, c_{"c"};
  std::unique_ptr<ReloadGateway> gateway_;
};

TEST_F(HostStateTest, TotalsAndPooledConnectionsSurvivePolicySwaps) {
  send(60);  // round robin: 20 each, and one pooled connection per host
  ClusterStat before = clusterStat(gateway_->adminPort(), "svc");
  ASSERT_EQ(before.hosts.size(), 3u);
  for (const HostStat& h : before.hosts) EXPECT_EQ(h.total, 20u) << h.address;
  const uint64_t opened = gateway_->stat("upstream_cx_total");
  EXPECT_EQ(opened, 3u);

  for (const char* policy : kPolicies) {
    SCOPED_TRACE(policy);
    ASSERT_TRUE(gateway_->rewrite(kConfig, vars(policy)));
    ASSERT_NE(gateway_->reload(Trigger::kSighup), 0u);
    ClusterStat now = clusterStat(gateway_->adminPort(), "svc");
    EXPECT_EQ(now.balancer, policy);
    ASSERT_EQ(now.hosts.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(now.hosts[i].total, before.hosts[i].total) << "totals reset by the swap";
      EXPECT_TRUE(now.hosts[i].healthy);
    }
    send(30);
    now = clusterStat(gateway_->adminPort(), "svc");
    EXPECT_EQ(now.total(), before.total() + 30);
    before = now;
  }
  // Every request after a swap went over a connection pooled before it (sequential requests
  // need at most one per host; a pool thrown away with the old policy would open new ones).
  std::map<std::string, uint64_t> stats = adminStats(gateway_->adminPort());
  EXPECT_EQ(stats["upstream_cx_total"], opened);
  EXPECT_EQ(stats["upstream_cx_reused"], 60 + 30 * std::size(kPolicies) - opened);
}

// Endpoints change with the policy (c out, d in): a and b keep their totals and pooled
// connections; only d needs a new upstream connection.
TEST_F(HostStateTest, HostsThatRemainKeepTheirStateWhenEndpointsChange) {
  send(60);
  const uint64_t opened = gateway_->stat("upstream_cx_total");
  EchoBackend d("d");
  std::map<std::string, std::string> next = vars("least_active");
  next["C"] = d.address();
  ASSERT_TRUE(gateway_->rewrite(kConfig, next));
  ASSERT_NE(gateway_->reload(Trigger::kAdmin), 0u);
  ClusterStat now = clusterStat(gateway_->adminPort(), "svc");
  ASSERT_EQ(now.hosts.size(), 3u);
  EXPECT_EQ(now.hosts[0].total, 20u);
  EXPECT_EQ(now.hosts[1].total, 20u);
  EXPECT_EQ(now.hosts[2].address, d.address());
  EXPECT_EQ(now.hosts[2].total, 0u);
  send(60);
  now = clusterStat(gateway_->adminPort(), "svc");
  EXPECT_EQ(now.total(), 100u);  // 40 kept (c's 20 went with c) + 60
  EXPECT_GT(now.hosts[2].total, 0u);
  EXPECT_EQ(gateway_->stat("upstream_cx_total"), opened + 1) << "pooled connections were lost";
}

// Reloads that leave the cluster alone (only a listener limit changes) do not restart its
// balancer's schedule: one request between reloads still goes round the hosts in turn.
TEST_F(HostStateTest, UnrelatedReloadsDoNotRestartTheSchedule) {
  std::map<std::string, int> seen;
  RawConnection conn(gateway_->port());
  for (int i = 0; i < 12; ++i) {
    std::string yaml = kConfig;
    yaml += "limits: { max_header_count: " + std::to_string(100 + i) + " }\n";
    ASSERT_TRUE(gateway_->rewrite(yaml, vars("round_robin")));
    ASSERT_NE(gateway_->reload(i % 2 == 0 ? Trigger::kAdmin : Trigger::kSighup), 0u);
    ASSERT_TRUE(conn.send(buildRequest("GET", "/svc/x", {}, "", gateway_->port())));
    Response r = conn.readResponse();
    ASSERT_EQ(r.status, 200) << r.error;
    ++seen[r.header("X-Backend")];
  }
  EXPECT_EQ(seen["a"], 4);
  EXPECT_EQ(seen["b"], 4);
  EXPECT_EQ(seen["c"], 4);
}

TEST_F(HostStateTest, InFlightCountReleasedOnTheSameHostAfterASwap) {
  RawConnection slow(gateway_->port(), 20000);
  ASSERT_TRUE(slow.send(buildRequest("GET", "/svc/delay/1500", {}, "", gateway_->port())));
  ClusterStat c;
  for (int i = 0; i < 100; ++i) {
    c = clusterStat(gateway_->adminPort(), "svc");
    if (c.hosts.size() == 3 && c.hosts[0].active + c.hosts[1].active + c.hosts[2].active == 1)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  size_t busy = 3;
  for (size_t i = 0; i < c.hosts.size(); ++i) {
    if (c.hosts[i].active == 1) busy = i;
  }
  ASSERT_LT(busy, 3u) << "the slow request never reached a host";

  ASSERT_TRUE(gateway_->rewrite(kConfig, vars("least_active")));
  ASSERT_NE(gateway_->reload(Trigger::kAdmin), 0u);
  c = clusterStat(gateway_->adminPort(), "svc");
  ASSERT_EQ(c.hosts.size(), 3u);
  EXPECT_EQ(c.hosts[busy].active, 1u) << "the in-flight count was lost with the old policy";
  // least_active sees that count: new requests avoid the busy host while it is busy.
  for (int i = 0; i < 6; ++i) {
    Response r = httpGet(gateway_->port(), "/svc/x");
    ASSERT_EQ(r.status, 200);
    EXPECT_NE(r.header("X-Backend"), std::string(1, static_cast<char>('a' + busy)));
  }

  Response r = slow.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  c = clusterStat(gateway_->adminPort(), "svc");
  for (const HostStat& h : c.hosts) EXPECT_EQ(h.active, 0u) << h.address << " (wrapped?)";
}

}  // namespace
}  // namespace sluice::test
