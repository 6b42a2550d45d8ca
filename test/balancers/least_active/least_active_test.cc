// least_active unit tests: the balancer class called directly (no dlopen) over fake host sets
// whose in-flight counts the tests set, with a seeded fake random().
#include "balancers/least_active/least_active.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
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

class LeastActiveTest : public ::testing::Test {
 protected:
  LeastActiveTest()
      : config_(testing::YamlConfig("").node()), la_(config_, testing::fakeContext()) {
    testing::seedRandom(20240602);
  }
  // Delivers `hosts` with in-flight counts `active` (kept alive until the next call).
  void setHosts(std::vector<FakeHost> hosts, std::vector<uint32_t> active = {}) {
    set_ = std::make_unique<FakeHostSet>(std::move(hosts));
    for (size_t i = 0; i < active.size(); ++i) set_->setActive(i, active[i]);
    la_.onHostSet(set_->view());
  }
  int64_t pickIndex(std::vector<uint32_t> tried = {}) {
    return la_.pick(FakePick(std::move(tried)).view());
  }
  std::string pickAddress(std::vector<uint32_t> tried = {}) {
    int64_t i = pickIndex(std::move(tried));
    return i < 0 ? "NONE" : std::string(set_->view()[i].address());
  }

  LeastActiveConfig config_;
  LeastActive la_;
  std::unique_ptr<FakeHostSet> set_;
};

TEST_F(LeastActiveTest, PicksTheHostWithFewestInFlight) {
  setHosts({{"a"}, {"b"}, {"c"}}, {5, 2, 7});
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(pickAddress(), "b");
  // The count is read at every pick: the balancer follows it without a new host set.
  set_->setActive(1, 9);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(pickAddress(), "a");
}

TEST_F(LeastActiveTest, ComparesInFlightPerUnitOfWeight) {
  // a: 5 / 3 = 1.67 per weight, b: 2 / 1 = 2 → a, though it has more in flight.
  setHosts({{"a", 3}, {"b", 1}}, {5, 2});
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(pickAddress(), "a");
  // a: 6 / 3 = b: 2 / 1 — a tie, broken in proportion to weight (3:1): a within 75% +- 1.5%.
  set_->setActive(0, 6);
  std::map<std::string, int> counts;
  for (int i = 0; i < 100000; ++i) ++counts[pickAddress()];
  EXPECT_NEAR(counts["a"], 75000, 1500);
}

// 100k picks over 4 equally loaded, equal-weight hosts: each within 25% +- 3% relative
// (+-750 picks, about 5.5 standard deviations).
TEST_F(LeastActiveTest, TiesAreBrokenEvenly) {
  setHosts({{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}, {3, 3, 3, 3, 4});
  std::map<std::string, int> counts;
  const int kPicks = 100000;
  for (int i = 0; i < kPicks; ++i) ++counts[pickAddress()];
  EXPECT_EQ(counts.count("e"), 0u);  // busier than the tied four
  for (const char* address : {"a", "b", "c", "d"}) {
    EXPECT_NEAR(counts[address], kPicks / 4, kPicks / 4 * 0.03) << address;
  }
}

// Requests that never end: every pick adds one in-flight request to the picked host. The in-flight
// counts then follow the weights exactly (1:2:3, within one request), as weighted least-active
// should under steady load.
TEST_F(LeastActiveTest, InFlightFollowsWeightsUnderLoad) {
  setHosts({{"a", 1}, {"b", 2}, {"c", 3}});
  for (int i = 0; i < 600; ++i) {
    int64_t picked = pickIndex();
    ASSERT_GE(picked, 0);
    set_->setActive(picked, set_->active(picked) + 1);
    for (size_t h = 0; h < 3; ++h) {
      double ideal = (i + 1) * (h + 1) / 6.0;
      ASSERT_LE(std::abs(set_->active(h) - ideal), 1.0) << "host " << h << " after " << i + 1;
    }
  }
}

TEST_F(LeastActiveTest, SkipsUnhealthyHosts) {
  setHosts({{"a"}, {"b", 1, false}, {"c"}}, {4, 0, 4});
  std::map<std::string, int> counts;
  for (int i = 0; i < 10000; ++i) ++counts[pickAddress()];
  EXPECT_EQ(counts.count("b"), 0u);  // the idlest host, but unhealthy
  EXPECT_NEAR(counts["a"], 5000, 250);
  EXPECT_NEAR(counts["c"], 5000, 250);
}

TEST_F(LeastActiveTest, AvoidsTriedHostsWhileAnotherHealthyOneExists) {
  setHosts({{"a"}, {"b"}, {"c"}, {"d", 1, false}}, {0, 5, 9, 0});
  // a is the least loaded but was tried: the next least loaded.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(pickAddress({0}), "b");
  for (int i = 0; i < 100; ++i) ASSERT_EQ(pickAddress({0, 1}), "c");
  // Every healthy host tried: the least loaded healthy one again, never the unhealthy one.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(pickAddress({0, 1, 2}), "a");
  for (int i = 0; i < 100; ++i) ASSERT_EQ(pickAddress({2, 0, 1, 0}), "a");
}

TEST_F(LeastActiveTest, NoHostMeansNone) {
  setHosts({});
  EXPECT_EQ(pickIndex(), sdk::kPickNone);
  setHosts({{"a", 1, false}, {"b", 2, false}});
  EXPECT_EQ(pickIndex(), sdk::kPickNone);
  EXPECT_EQ(pickIndex({0, 1}), sdk::kPickNone);
}

// 50 random host-set changes (hosts join and leave, weights and health change, order shuffles)
// while requests start and end; in-flight counts live by address, as in the core's host table.
// After that, the last set of 1:2:3 hosts keeps in-flight at 1:2:3 within one request, and ties
// are still broken evenly: the balancer keeps no history that could skew it.
TEST_F(LeastActiveTest, NoSkewAfterFiftyRandomHostSetChanges) {
  std::mt19937 rng(99);
  std::map<std::string, uint32_t> active;
  for (int change = 0; change < 50; ++change) {
    std::vector<FakeHost> hosts = {{"a", 1}, {"b", 2}, {"c", 3}};
    for (int e = static_cast<int>(rng() % 4); e > 0; --e) {
      hosts.push_back(
          {"x" + std::to_string(rng() % 6), 1 + static_cast<uint32_t>(rng() % 5), rng() % 4 != 0});
    }
    std::shuffle(hosts.begin(), hosts.end(), rng);
    hosts.erase(hosts.begin() + 2 + rng() % (hosts.size() - 2), hosts.end());  // some leave
    std::vector<uint32_t> counts;
    for (const FakeHost& h : hosts) counts.push_back(active[h.address]);
    setHosts(hosts, counts);
    for (int n = static_cast<int>(rng() % 20); n > 0; --n) {
      int64_t picked = pickIndex();
      if (picked < 0) continue;
      ++active[std::string(set_->view()[picked].address())];
    }
    for (auto& [address, count] : active) count -= count > 0 ? rng() % (count + 1) : 0;  // ends
  }
  setHosts({{"a", 1}, {"b", 2}, {"c", 3}});  // every request ended
  for (int i = 0; i < 600; ++i) {
    int64_t picked = pickIndex();
    set_->setActive(picked, set_->active(picked) + 1);
  }
  EXPECT_NEAR(set_->active(0), 100, 1);
  EXPECT_NEAR(set_->active(1), 200, 1);
  EXPECT_NEAR(set_->active(2), 300, 1);
  setHosts({{"a"}, {"b"}, {"c"}});
  std::map<std::string, int> counts;
  for (int i = 0; i < 30000; ++i) ++counts[pickAddress()];
  for (const char* address : {"a", "b", "c"}) EXPECT_NEAR(counts[address], 10000, 300) << address;
}

TEST(LeastActiveConfigTest, RefusesAnyKeyWithItsPosition) {
  EXPECT_NO_THROW(LeastActiveConfig{testing::YamlConfig("{}\n").node()});
  testing::YamlConfig bad("\nchoice_count: 2\n");
  try {
    LeastActiveConfig config(bad.node());
    FAIL() << "accepted an unknown key";
  } catch (const sdk::ConfigError& e) {
    EXPECT_STREQ(e.what(), "unknown key 'choice_count' (no keys allowed)");
    EXPECT_EQ(e.line(), 2u);
    EXPECT_EQ(e.column(), 15u);
  }
}

}  // namespace
}  // namespace sluice::balancers
