// Load-balancing distribution measured through the real binary and the real balancer plugins:
// which echo backend served each request (its X-Backend header).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: ${WORKERS}
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: pool
    balancer: { name: ${BALANCER} }
    endpoints:
      - { address: ${B0}, weight: ${W0} }
      - { address: ${B1}, weight: ${W1} }
      - { address: ${B2}, weight: ${W2} }
)";

// Three backends "b0", "b1", "b2" behind one sluice with the given balancer and weights.
struct Balanced {
  Balanced(const std::string& balancer, int workers, const std::vector<int>& weights) {
    for (int i = 0; i < 3; ++i) {
      backends.push_back(std::make_unique<EchoBackend>("b" + std::to_string(i)));
    }
    gateway = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"BALANCER", balancer},
                                                    {"WORKERS", std::to_string(workers)},
                                                    {"B0", backends[0]->address()},
                                                    {"B1", backends[1]->address()},
                                                    {"B2", backends[2]->address()},
                                                    {"W0", std::to_string(weights[0])},
                                                    {"W1", std::to_string(weights[1])},
                                                    {"W2", std::to_string(weights[2])}});
  }

  // Sends `n` GETs on one keep-alive connection; returns how many each backend served.
  std::map<std::string, int> count(int n) {
    std::map<std::string, int> served;
    RawConnection conn(gateway->port());
    EXPECT_TRUE(conn.connected());
    for (int i = 0; i < n; ++i) {
      if (!conn.send(buildRequest("GET", "/gateway/pool/req/" + std::to_string(i), {}, "",
                                  gateway->port()))) {
        ADD_FAILURE() << "send failed at request " << i;
        break;
      }
      Response r = conn.readResponse();
      if (!r.complete || r.status != 200) {
        ADD_FAILURE() << "request " << i << ": status " << r.status << " " << r.error;
        break;
      }
      ++served[r.header("X-Backend")];
    }
    return served;
  }

  std::vector<std::unique_ptr<EchoBackend>> backends;
  std::unique_ptr<Gateway> gateway;
};

TEST(BalancingTest, RoundRobinGivesExactlyEqualShares) {
  Balanced setup("round_robin", 1, {1, 1, 1});
  ASSERT_TRUE(setup.gateway->ready());
  std::map<std::string, int> served = setup.count(300);
  EXPECT_EQ(served["b0"], 100);
  EXPECT_EQ(served["b1"], 100);
  EXPECT_EQ(served["b2"], 100);
  EXPECT_EQ(served.size(), 3u);
}

TEST(BalancingTest, RoundRobinRotatesAcrossConnections) {
  // Each request on a new connection: the balancer state is per worker, not per connection.
  Balanced setup("round_robin", 1, {1, 1, 1});
  ASSERT_TRUE(setup.gateway->ready());
  std::map<std::string, int> served;
  for (int i = 0; i < 30; ++i) {
    Response r = httpGet(setup.gateway->port(), "/gateway/pool/x");
    ASSERT_TRUE(r.complete) << r.error;
    ++served[r.header("X-Backend")];
  }
  EXPECT_EQ(served["b0"], 10);
  EXPECT_EQ(served["b1"], 10);
  EXPECT_EQ(served["b2"], 10);
}

TEST(BalancingTest, WeightedRoundRobinIsExactOverFullCycles) {
  Balanced setup("round_robin", 1, {5, 3, 1});
  ASSERT_TRUE(setup.gateway->ready());
  // 20 full cycles of 5+3+1 = 9 picks.
  std::map<std::string, int> served = setup.count(180);
  EXPECT_EQ(served["b0"], 100);
  EXPECT_EQ(served["b1"], 60);
  EXPECT_EQ(served["b2"], 20);
}

TEST(BalancingTest, WeightedRoundRobinIsExactWithinEachCycle) {
  Balanced setup("round_robin", 1, {5, 3, 1});
  ASSERT_TRUE(setup.gateway->ready());
  for (int cycle = 0; cycle < 3; ++cycle) {
    std::map<std::string, int> served = setup.count(9);
    EXPECT_EQ(served["b0"], 5) << "cycle " << cycle;
    EXPECT_EQ(served["b1"], 3) << "cycle " << cycle;
    EXPECT_EQ(served["b2"], 1) << "cycle " << cycle;
  }
}

TEST(BalancingTest, WeightedRandomIsWithinTolerance) {
  // 3000 requests, weights 5/3/1 → expected shares 55.6 %, 33.3 %, 11.1 %. Each share is
  // binomial; ±4 percentage points is at least 4.4 standard deviations for every backend (false
  // failure probability < 1e-4), yet a balancer ignoring weights (33 % each) fails clearly.
  constexpr int kRequests = 3000;
  constexpr double kTolerance = 0.04;
  Balanced setup("random", 2, {5, 3, 1});
  ASSERT_TRUE(setup.gateway->ready());
  std::map<std::string, int> served = setup.count(kRequests);
  const std::map<std::string, double> expected{{"b0", 5.0 / 9}, {"b1", 3.0 / 9}, {"b2", 1.0 / 9}};
  int total = 0;
  for (const auto& [name, share] : expected) {
    double got = static_cast<double>(served[name]) / kRequests;
    EXPECT_NEAR(got, share, kTolerance) << name << " served " << served[name];
    total += served[name];
  }
  EXPECT_EQ(total, kRequests);
}

TEST(BalancingTest, RandomWithEqualWeightsReachesEveryBackend) {
  Balanced setup("random", 1, {1, 1, 1});
  ASSERT_TRUE(setup.gateway->ready());
  std::map<std::string, int> served = setup.count(600);
  for (const char* name : {"b0", "b1", "b2"}) {
    // Expected 200 each, sd ≈ 11.5: ±70 is 6 sd.
    EXPECT_NEAR(served[name], 200, 70) << name;
  }
}

}  // namespace
}  // namespace sluice::test
