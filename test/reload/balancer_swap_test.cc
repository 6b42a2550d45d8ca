// Balancer swap under load: keep-alive clients send requests without pause while the config is
// rewritten and reloaded (SIGHUP and POST /reload in turn) through every balancer and a few
// weight changes. No client may see a non-2xx answer or lose its connection, and after each
// reload the traffic follows the new policy.
#include <gtest/gtest.h>
#include <signal.h>

#include <iostream>
#include <set>

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
    hash_key: { header: X-User }
    endpoints:
      - { address: ${A}, weight: ${WA} }
      - { address: ${B}, weight: ${WB} }
      - { address: ${C}, weight: ${WC} }
)";

// One step of the sequence: a balancer, the weights of a, b, c, and what to check.
struct Step {
  const char* balancer;
  int wa, wb, wc;
  enum Check { kShares, kAllUsed, kSticky } check;
};

// Consecutive steps always differ: a policy, or only the weights (steps 5 → 6).
constexpr Step kSteps[] = {
    {"random", 1, 1, 4, Step::kShares},      {"least_active", 1, 1, 1, Step::kAllUsed},
    {"ring_hash", 1, 1, 1, Step::kSticky},   {"p2c", 1, 1, 1, Step::kAllUsed},
    {"round_robin", 3, 1, 1, Step::kShares}, {"round_robin", 1, 1, 1, Step::kShares},
    {"maglev", 1, 1, 1, Step::kSticky},      {"least_active", 1, 1, 1, Step::kAllUsed},
    {"ring_hash", 2, 1, 1, Step::kSticky},   {"p2c", 1, 1, 1, Step::kAllUsed},
    {"random", 1, 4, 1, Step::kShares},      {"round_robin", 1, 2, 3, Step::kShares},
};

class BalancerSwapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"a", "b", "c"})
      backends_.push_back(std::make_unique<EchoBackend>(name));
    gateway_ = std::make_unique<ReloadGateway>(kConfig, vars(kSteps[11]));
    ASSERT_TRUE(gateway_->ready());
  }

  std::map<std::string, std::string> vars(const Step& s) {
    return {{"BALANCER", s.balancer},       {"A", backends_[0]->address()},
            {"B", backends_[1]->address()}, {"C", backends_[2]->address()},
            {"WA", std::to_string(s.wa)},   {"WB", std::to_string(s.wb)},
            {"WC", std::to_string(s.wc)}};
  }

  // Traffic shares match the weights (round_robin: within 5 points; random: within 15).
  void expectShares(const Step& s) {
    auto shares = measureShares(gateway_->adminPort(), "svc", 400);
    ASSERT_EQ(shares.size(), 3u) << s.balancer;
    const double total = s.wa + s.wb + s.wc;
    const double tolerance = std::string(s.balancer) == "round_robin" ? 0.05 : 0.15;
    EXPECT_NEAR(shares[backends_[0]->address()], s.wa / total, tolerance) << s.balancer;
    EXPECT_NEAR(shares[backends_[1]->address()], s.wb / total, tolerance) << s.balancer;
    EXPECT_NEAR(shares[backends_[2]->address()], s.wc / total, tolerance) << s.balancer;
  }

  // Every host gets a fair part of the traffic (least-loaded policies, equal weights).
  void expectAllUsed(const Step& s) {
    auto shares = measureShares(gateway_->adminPort(), "svc", 400);
    ASSERT_EQ(shares.size(), 3u) << s.balancer;
    for (const auto& [address, share] : shares)
      EXPECT_GT(share, 0.12) << s.balancer << " " << address;
  }

  // Each user always reaches the same backend, whichever worker the connection lands on, and
  // the users spread over more than one backend.
  void expectSticky(const Step& s) {
    std::set<std::string> used;
    for (int user = 0; user < 24; ++user) {
      std::set<std::string> seen;
      for (int i = 0; i < 3; ++i) {
        Response r =
            httpGet(gateway_->port(), "/svc/u", {{"X-User", "user-" + std::to_string(user)}});
        ASSERT_EQ(r.status, 200) << s.balancer << ": " << r.error << r.body;
        seen.insert(r.header("X-Backend"));
      }
      EXPECT_EQ(seen.size(), 1u) << s.balancer << ": user-" << user << " moved between backends";
      used.insert(seen.begin(), seen.end());
    }
    EXPECT_GE(used.size(), 2u) << s.balancer << ": every user on one backend";
  }

  std::vector<std::unique_ptr<EchoBackend>> backends_;
  std::unique_ptr<ReloadGateway> gateway_;
};

TEST_F(BalancerSwapTest, EveryPolicyUnderLoadWithoutAFailedRequest) {
  LoadClients load(gateway_->port(), 4, "/svc/load");
  LoadClients fresh(gateway_->port(), 2, "/svc/fresh", {}, LoadClients::Mode::kFresh);
  ASSERT_TRUE(load.waitResponses(200)) << "no traffic";
  expectShares(kSteps[11]);  // the starting point: round_robin 1:2:3
  for (size_t i = 0; i < 2 * std::size(kSteps); ++i) {
    const Step& s = kSteps[i % std::size(kSteps)];
    SCOPED_TRACE(std::string("reload ") + std::to_string(i + 1) + " to " + s.balancer);
    ASSERT_TRUE(gateway_->rewrite(kConfig, vars(s)));
    ASSERT_NE(gateway_->reload(i % 2 == 0 ? Trigger::kSighup : Trigger::kAdmin), 0u);
    ClusterStat c = clusterStat(gateway_->adminPort(), "svc");
    EXPECT_EQ(c.balancer, s.balancer);
    ASSERT_EQ(c.hosts.size(), 3u);
    EXPECT_EQ(c.hosts[0].weight, static_cast<uint64_t>(s.wa));
    EXPECT_EQ(c.hosts[2].weight, static_cast<uint64_t>(s.wc));
    if (s.check == Step::kShares) expectShares(s);
    if (s.check == Step::kAllUsed) expectAllUsed(s);
    if (s.check == Step::kSticky) expectSticky(s);
    EXPECT_EQ(load.failures(), 0u);
  }
  ASSERT_TRUE(load.waitResponses(100));
  load.stop();
  fresh.stop();
  EXPECT_EQ(load.failures(), 0u) << "first failures:\n"
                                 << ::testing::PrintToString(load.failureSamples());
  EXPECT_EQ(fresh.failures(), 0u) << "new connections failed:\n"
                                  << ::testing::PrintToString(fresh.failureSamples());
  EXPECT_GT(fresh.ok(), 100u);
  EXPECT_GT(load.ok(), 1000u);
  std::cout << load.ok() << " requests across " << 2 * std::size(kSteps) << " reloads\n";
  std::map<std::string, uint64_t> stats = adminStats(gateway_->adminPort());
  EXPECT_EQ(stats["reloads_ok"], 2 * std::size(kSteps));
  EXPECT_EQ(stats["reloads_failed"], 0u);
  EXPECT_EQ(stats["downstream_rq_5xx"], 0u);
  EXPECT_GT(stats["reload_apply_us_p50"], 0u);
  EXPECT_GE(stats["reload_apply_us_p99"], stats["reload_apply_us_p50"]);
  EXPECT_GE(stats["reload_apply_us_max"], stats["reload_apply_us_p99"]);
  EXPECT_TRUE(gateway_->process().running());
}

// Reloads back to back, none waiting for the previous one to reach the workers: snapshots pile
// up in the workers' queues and are released in any order while requests use them.
TEST_F(BalancerSwapTest, BackToBackReloadsUnderLoad) {
  LoadClients load(gateway_->port(), 4, "/svc/load");
  LoadClients fresh(gateway_->port(), 2, "/svc/fresh", {}, LoadClients::Mode::kFresh);
  ASSERT_TRUE(load.waitResponses(200));
  constexpr int kReloads = 100;
  for (int i = 0; i < kReloads; ++i) {
    ASSERT_TRUE(gateway_->rewrite(kConfig, vars(kSteps[i % std::size(kSteps)])));
    if (i % 2 == 0) {
      gateway_->process().signal(SIGHUP);
    } else {
      EXPECT_EQ(gateway_->adminReload().status, 200);
    }
  }
  // SIGHUPs that arrive together are one signal: at least the admin half applied, none failed.
  ASSERT_TRUE(gateway_->waitStat("reloads_ok", kReloads / 2));
  const uint64_t version = gateway_->stat("config_version");
  EXPECT_TRUE(gateway_->waitApplied(version));
  EXPECT_EQ(gateway_->stat("reloads_failed"), 0u);
  EXPECT_EQ(clusterStat(gateway_->adminPort(), "svc").balancer,
            kSteps[(kReloads - 1) % std::size(kSteps)].balancer);
  ASSERT_TRUE(load.waitResponses(200));
  load.stop();
  fresh.stop();
  EXPECT_EQ(load.failures(), 0u) << ::testing::PrintToString(load.failureSamples());
  EXPECT_EQ(fresh.failures(), 0u) << ::testing::PrintToString(fresh.failureSamples());
  EXPECT_TRUE(gateway_->process().running());
}

}  // namespace
}  // namespace sluice::test
