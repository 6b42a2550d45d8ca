// round_robin unit tests: the balancer class called directly (no dlopen) over fake host sets.
#include "balancers/round_robin/round_robin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "test/balancers/testing/fake_host.h"
#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::balancers {
namespace {

using testing::FakeHost;
using testing::FakeHostSet;
using testing::FakePick;

class RoundRobinTest : public ::testing::Test {
 protected:
  RoundRobinTest() : config_(testing::YamlConfig("").node()), rr_(config_) {}

  // Delivers `hosts` (kept alive until the next call, as the host does).
  void setHosts(std::vector<FakeHost> hosts) {
    set_ = std::make_unique<FakeHostSet>(std::move(hosts));
    rr_.onHostSet(set_->view());
  }
  std::string pickAddress(std::vector<uint32_t> tried = {}) {
    int64_t i = rr_.pick(FakePick(std::move(tried)).view());
    return i < 0 ? "NONE" : std::string(set_->view()[i].address());
  }

  RoundRobinConfig config_;
  RoundRobin rr_;
  std::unique_ptr<FakeHostSet> set_;
};

TEST_F(RoundRobinTest, SmoothAndExactOverOneCycle) {
  setHosts({{"a", 5}, {"b", 1}, {"c", 1}});
  std::string seq;
  for (int i = 0; i < 7; ++i) seq += pickAddress();
  EXPECT_EQ(seq, "aabacaa");  // nginx's smooth order: the heavy host is interleaved
  std::map<std::string, int> counts;
  for (int i = 0; i < 7 * 100; ++i) ++counts[pickAddress()];
  EXPECT_EQ(counts["a"], 500);
  EXPECT_EQ(counts["b"], 100);
  EXPECT_EQ(counts["c"], 100);
}

TEST_F(RoundRobinTest, SkipsUnhealthyHosts) {
  setHosts({{"a", 1}, {"b", 3, false}, {"c", 2}});
  std::map<std::string, int> counts;
  for (int i = 0; i < 300; ++i) ++counts[pickAddress()];
  EXPECT_EQ(counts["a"], 100);
  EXPECT_EQ(counts["b"], 0);
  EXPECT_EQ(counts["c"], 200);
}

TEST_F(RoundRobinTest, AvoidsTriedHostsWhileAnotherHealthyOneExists) {
  setHosts({{"a", 10}, {"b", 1}, {"c", 1, false}});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(pickAddress({0}), "b");
  // Every healthy host tried: a healthy one is still returned, never the unhealthy one.
  for (int i = 0; i < 20; ++i) EXPECT_NE(pickAddress({0, 1}), "c");
}

TEST_F(RoundRobinTest, NoHostMeansNone) {
  setHosts({});
  EXPECT_EQ(rr_.pick(FakePick().view()), sdk::kPickNone);
  setHosts({{"a", 1, false}, {"b", 2, false}});
  EXPECT_EQ(rr_.pick(FakePick().view()), sdk::kPickNone);
  EXPECT_EQ(rr_.pick(FakePick({0, 1}).view()), sdk::kPickNone);
}

TEST_F(RoundRobinTest, RedeliveringTheSameHostsInAnyOrderDoesNotRestartTheSchedule) {
  RoundRobin reference(config_);
  FakeHostSet fixed({{"a", 5}, {"b", 1}, {"c", 1}});
  reference.onHostSet(fixed.view());
  std::mt19937 rng(7);
  std::vector<FakeHost> hosts = {{"a", 5}, {"b", 1}, {"c", 1}};
  for (int i = 0; i < 70; ++i) {
    std::shuffle(hosts.begin(), hosts.end(), rng);
    setHosts(hosts);
    std::string expected(fixed.view()[reference.pick(FakePick().view())].address());
    EXPECT_EQ(pickAddress(), expected) << "pick " << i;
  }
}

// 50 random host-set changes (order shuffled, unhealthy extra hosts coming and going) with 1-3
// picks between them: the three stable hosts keep their 1:2:3 shares at every point, within one
// pick. (Restarting the schedule on each change would give the weight-3 host the first pick every
// time: about 9-13 picks of skew in this run.)
TEST_F(RoundRobinTest, NoSkewAcrossFiftyRandomHostSetChanges) {
  const std::vector<FakeHost> stable = {{"a", 1}, {"b", 2}, {"c", 3}};
  std::mt19937 rng(42);
  std::map<std::string, int> counts;
  int picks = 0;
  for (int change = 0; change < 50; ++change) {
    std::vector<FakeHost> hosts = stable;
    int extras = static_cast<int>(rng() % 3);
    for (int e = 0; e < extras; ++e) {
      hosts.push_back(
          {"x" + std::to_string(rng() % 5), 1 + static_cast<uint32_t>(rng() % 9), false});
    }
    std::shuffle(hosts.begin(), hosts.end(), rng);
    setHosts(hosts);
    for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n) {
      ++counts[pickAddress()];
      ++picks;
      for (const FakeHost& h : stable) {
        double ideal = picks * h.weight / 6.0;
        ASSERT_LE(std::fabs(counts[h.address] - ideal), 1.0)
            << h.address << " after " << picks << " picks, change " << change;
      }
    }
  }
}

// Healthy hosts of random weights join and leave 50 times; afterwards the schedule for the final
// set is exact over whole cycles, within the one-cycle state carried in (+-2 picks).
TEST_F(RoundRobinTest, SharesMatchWeightsAfterFiftyRandomChanges) {
  std::mt19937 rng(1234);
  for (int change = 0; change < 50; ++change) {
    std::vector<FakeHost> hosts = {{"a", 1}, {"b", 2}, {"c", 3}};
    for (int e = static_cast<int>(rng() % 4); e > 0; --e) {
      hosts.push_back(
          {"x" + std::to_string(e), 1 + static_cast<uint32_t>(rng() % 9), rng() % 10 < 7});
    }
    std::shuffle(hosts.begin(), hosts.end(), rng);
    setHosts(hosts);
    for (int n = 1 + static_cast<int>(rng() % 20); n > 0; --n) pickAddress();
  }
  setHosts({{"a", 1}, {"b", 2}, {"c", 3}});
  std::map<std::string, int> counts;
  for (int i = 0; i < 600; ++i) ++counts[pickAddress()];
  EXPECT_NEAR(counts["a"], 100, 2);
  EXPECT_NEAR(counts["b"], 200, 2);
  EXPECT_NEAR(counts["c"], 300, 2);
}

TEST(RoundRobinStaggerTest, WorkersStartAtDifferentHostsAndStayExact) {
  RoundRobinConfig config(testing::YamlConfig("").node());
  std::vector<std::string> firsts;
  for (uint32_t worker = 0; worker < 3; ++worker) {
    sdk::BalancerContext context(sdk::Host(nullptr), "c", worker);
    RoundRobin rr(config, context);
    FakeHostSet set({{"a", 1}, {"b", 1}, {"c", 1}});
    rr.onHostSet(set.view());
    std::map<std::string, int> counts;
    for (int i = 0; i < 300; ++i) {
      int64_t idx = rr.pick(FakePick(std::vector<uint32_t>{}).view());
      std::string addr(set.view()[idx].address());
      if (i == 0) firsts.push_back(addr);
      ++counts[addr];
    }
    EXPECT_EQ(counts["a"], 100);
    EXPECT_EQ(counts["b"], 100);
    EXPECT_EQ(counts["c"], 100);
  }
  // Three workers of a three-host cluster begin on three different hosts.
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(firsts, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(RoundRobinConfigTest, RefusesAnyKeyWithItsPosition) {
  testing::YamlConfig yaml("{}\n");
  EXPECT_NO_THROW(RoundRobinConfig{yaml.node()});
  testing::YamlConfig bad("\nslow_start: 10s\n");
  try {
    RoundRobinConfig config(bad.node());
    FAIL() << "accepted an unknown key";
  } catch (const sdk::ConfigError& e) {
    EXPECT_STREQ(e.what(), "unknown key 'slow_start' (no keys allowed)");
    EXPECT_EQ(e.line(), 2u);
    EXPECT_EQ(e.column(), 13u);
  }
  testing::YamlConfig list("[1, 2]");
  EXPECT_THROW(RoundRobinConfig{list.node()}, sdk::ConfigError);
}

}  // namespace
}  // namespace sluice::balancers
