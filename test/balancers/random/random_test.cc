// random unit tests: the balancer class called directly (no dlopen) with a seeded fake random().
#include "balancers/random/random.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "test/balancers/testing/fake_host.h"
#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::balancers {
namespace {

using testing::FakeHost;
using testing::FakeHostSet;
using testing::FakePick;

class RandomTest : public ::testing::Test {
 protected:
  RandomTest() : config_(testing::YamlConfig("").node()), random_(config_, testing::fakeContext()) {
    testing::seedRandom(20240601);
  }
  void setHosts(std::vector<FakeHost> hosts) {
    set_ = std::make_unique<FakeHostSet>(std::move(hosts));
    random_.onHostSet(set_->view());
  }
  std::string pickAddress(std::vector<uint32_t> tried = {}) {
    int64_t i = random_.pick(FakePick(std::move(tried)).view());
    return i < 0 ? "NONE" : std::string(set_->view()[i].address());
  }

  RandomConfig config_;
  Random random_;
  std::unique_ptr<FakeHostSet> set_;
};

// 100k picks with a fixed seed: every host's share is within 3% (relative) of weight / total.
TEST_F(RandomTest, DistributionFollowsWeights) {
  setHosts({{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}});
  std::map<std::string, int> counts;
  const int kPicks = 100000;
  for (int i = 0; i < kPicks; ++i) ++counts[pickAddress()];
  const std::map<std::string, double> expected = {{"a", 0.1}, {"b", 0.2}, {"c", 0.3}, {"d", 0.4}};
  for (const auto& [address, share] : expected) {
    EXPECT_NEAR(counts[address], kPicks * share, kPicks * share * 0.03) << address;
  }
  EXPECT_EQ(counts.size(), 4u);
}

TEST_F(RandomTest, SkipsUnhealthyHosts) {
  setHosts({{"a", 1}, {"b", 100, false}, {"c", 1}});
  std::map<std::string, int> counts;
  for (int i = 0; i < 10000; ++i) ++counts[pickAddress()];
  EXPECT_EQ(counts["b"], 0);
  EXPECT_NEAR(counts["a"], 5000, 150);
  EXPECT_NEAR(counts["c"], 5000, 150);
}

TEST_F(RandomTest, AvoidsTriedHostsWhileAnotherHealthyOneExists) {
  setHosts({{"a", 100}, {"b", 1}, {"c", 1}, {"d", 50, false}});
  std::map<std::string, int> counts;
  for (int i = 0; i < 10000; ++i) ++counts[pickAddress({0})];
  EXPECT_EQ(counts["a"], 0);
  EXPECT_EQ(counts["d"], 0);
  EXPECT_NEAR(counts["b"], 5000, 150);
  // The same index twice in `tried` is still one host.
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(pickAddress({0, 1, 0}), "c");
  // Every healthy host tried: any healthy host, weighted again, never the unhealthy one.
  counts.clear();
  for (int i = 0; i < 10000; ++i) ++counts[pickAddress({0, 1, 2})];
  EXPECT_EQ(counts["d"], 0);
  EXPECT_GT(counts["a"], 9500);
}

TEST_F(RandomTest, NoHostMeansNone) {
  setHosts({});
  EXPECT_EQ(random_.pick(FakePick().view()), sdk::kPickNone);
  setHosts({{"a", 1, false}});
  EXPECT_EQ(random_.pick(FakePick().view()), sdk::kPickNone);
  EXPECT_EQ(random_.pick(FakePick({0}).view()), sdk::kPickNone);
}

TEST(RandomConfigTest, RefusesAnyKeyWithItsPosition) {
  testing::YamlConfig bad("seed: 4\n");
  try {
    RandomConfig config(bad.node());
    FAIL() << "accepted an unknown key";
  } catch (const sdk::ConfigError& e) {
    EXPECT_STREQ(e.what(), "unknown key 'seed' (no keys allowed)");
    EXPECT_EQ(e.line(), 1u);
    EXPECT_EQ(e.column(), 7u);
  }
}

}  // namespace
}  // namespace sluice::balancers
