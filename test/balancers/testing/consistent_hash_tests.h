// Test helper for the consistent-hash balancers (ring_hash, maglev): a balancer instance over
// fake host sets (HashBalancerInstance), and the tests every such balancer must pass, as a
// typed test suite (ConsistentHashTest). A balancer's test file instantiates the suite with a
// traits struct and keeps only its own tests:
//
//   struct MaglevTraits {
//     using Config = MaglevConfig;
//     using Balancer = Maglev;
//     // Bound on worstRelativeError of 100k keys' shares against weight shares, default config.
//     static constexpr double kShareTolerance = 0.05;
//     // Checks the spread of an unhealthy host's keys: receiving address → keys received.
//     static void expectUnhealthyKeysSpread(const std::map<std::string, int>& receivers) {}
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Maglev, ConsistentHashTest, MaglevTraits);
//
// Instantiate once per test binary, from namespace sluice::balancers (where the suite is).
// Single-threaded.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/api/sdk/balancer.h"
#include "test/balancers/testing/fake_host.h"
#include "test/balancers/testing/key_mapping.h"
#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::testing {

// Keys per mapping in these tests.
inline constexpr size_t kHashTestKeys = 100000;

// A balancer instance with its own config and host set, as one worker holds it.
template <typename Config, typename Balancer>
class HashBalancerInstance {
 public:
  explicit HashBalancerInstance(const std::string& yaml = "", uint32_t worker = 0)
      : config_(YamlConfig(yaml).node()),
        balancer_(config_, sdk::BalancerContext(sdk::Host(fakeHostApi()), "c", worker)) {}
  void setHosts(std::vector<FakeHost> hosts) {
    hosts_ = hosts;
    set_ = std::make_unique<FakeHostSet>(std::move(hosts));
    balancer_.onHostSet(set_->view());
  }
  // The address picked for each of testKey(0 .. keys-1), "NONE" for none.
  std::vector<std::string> map(size_t keys = kHashTestKeys,
                               const std::vector<uint32_t>& tried = {}) {
    return mapKeys(balancer_, *set_, keys, tried);
  }
  // The address picked for `key`, "NONE" for none.
  std::string pick(const std::string& key, std::vector<uint32_t> tried = {}) {
    int64_t i = balancer_.pick(FakePick(std::move(tried), key).view());
    return i < 0 ? "NONE" : std::string(set_->view()[i].address());
  }
  // worstRelativeError of the mapping's shares against the weight shares of hosts().
  double worstError(const std::vector<std::string>& mapping) const {
    return worstRelativeError(shares(mapping), weightShares(hosts_));
  }
  const std::vector<FakeHost>& hosts() const { return hosts_; }
  Balancer& balancer() { return balancer_; }

 private:
  Config config_;
  Balancer balancer_;
  std::vector<FakeHost> hosts_;
  std::unique_ptr<FakeHostSet> set_;
};

}  // namespace sluice::testing

// The suite lives in the balancers' namespace, where the test files instantiate it.
namespace sluice::balancers {

template <typename Traits>
class ConsistentHashTest : public ::testing::Test {
 protected:
  using Instance =
      testing::HashBalancerInstance<typename Traits::Config, typename Traits::Balancer>;
};

TYPED_TEST_SUITE_P(ConsistentHashTest);

// Shares of 100k keys against weight shares, each host within Traits::kShareTolerance relative.
TYPED_TEST_P(ConsistentHashTest, DistributionFollowsWeights) {
  typename TestFixture::Instance weighted;
  weighted.setHosts(testing::weightedHosts({1, 2, 3, 4, 5}));
  EXPECT_LE(weighted.worstError(weighted.map()), TypeParam::kShareTolerance);
  typename TestFixture::Instance ten;
  ten.setHosts(testing::numberedHosts(10));
  EXPECT_LE(ten.worstError(ten.map()), TypeParam::kShareTolerance);
}

// A host turning unhealthy keeps the table: exactly its keys move (where to: checked by
// Traits::expectUnhealthyKeysSpread), and they come back when it is healthy again.
TYPED_TEST_P(ConsistentHashTest, AnUnhealthyHostsKeysMoveAndComeBack) {
  typename TestFixture::Instance table;
  auto hosts = testing::numberedHosts(10);
  table.setHosts(hosts);
  auto before = table.map();
  hosts[2].healthy = false;
  table.setHosts(hosts);
  auto during = table.map();
  std::map<std::string, int> receivers;
  for (size_t i = 0; i < testing::kHashTestKeys; ++i) {
    ASSERT_EQ(before[i] != during[i], before[i] == "10.0.0.3:80") << testing::testKey(i);
    if (before[i] != during[i]) ++receivers[during[i]];
  }
  ASSERT_NO_FATAL_FAILURE(TypeParam::expectUnhealthyKeysSpread(receivers));
  hosts[2].healthy = true;
  table.setHosts(hosts);
  EXPECT_EQ(table.map(), before);
}

// The same key maps to the same host on every pick, on every worker's instance, whatever the
// order of the hosts in the set.
TYPED_TEST_P(ConsistentHashTest, SameKeySameHostAcrossPicksWorkersAndSetOrder) {
  auto hosts = testing::numberedHosts(10);
  hosts[3].weight = 4;
  typename TestFixture::Instance worker0("", 0);
  worker0.setHosts(hosts);
  auto reference = worker0.map();
  EXPECT_EQ(worker0.map(), reference);
  std::mt19937 rng(3);
  for (uint32_t worker = 1; worker < 4; ++worker) {
    std::shuffle(hosts.begin(), hosts.end(), rng);
    typename TestFixture::Instance other("", worker);
    other.setHosts(hosts);
    EXPECT_EQ(other.map(), reference) << "worker " << worker;
  }
}

// 50 random host-set changes (hosts join and leave, weights and health change, order shuffles):
// the final table maps every key exactly as a fresh instance does (no history), so the shares
// are those of DistributionFollowsWeights.
TYPED_TEST_P(ConsistentHashTest, NoSkewAfterFiftyRandomHostSetChanges) {
  typename TestFixture::Instance table;
  std::mt19937 rng(11);
  for (int change = 0; change < 50; ++change) {
    auto hosts = testing::numberedHosts(2 + rng() % 12, 1, 1 + rng() % 4);
    for (testing::FakeHost& h : hosts) {
      h.weight = 1 + rng() % 5;
      h.healthy = rng() % 5 != 0;
    }
    std::shuffle(hosts.begin(), hosts.end(), rng);
    table.setHosts(hosts);
    table.map(1000);
  }
  auto last = testing::weightedHosts({1, 2, 3, 4, 5});
  table.setHosts(last);
  typename TestFixture::Instance fresh;
  fresh.setHosts(last);
  auto mapping = table.map();
  EXPECT_EQ(mapping, fresh.map());
  EXPECT_LE(table.worstError(mapping), TypeParam::kShareTolerance);
}

// A tried host is avoided: another host, the same one every time (and on every worker), and
// retries spread over all the other healthy hosts; with every healthy host tried, the key's own
// host again. Unhealthy ones never.
TYPED_TEST_P(ConsistentHashTest, AvoidsTriedAndUnhealthyHosts) {
  typename TestFixture::Instance table;
  auto hosts = testing::numberedHosts(5);
  hosts[4].healthy = false;
  table.setHosts(hosts);
  std::map<std::string, int> retry_targets;
  for (size_t k = 0; k < 2000; ++k) {
    std::string key = testing::testKey(k);
    std::string first = table.pick(key);
    ASSERT_NE(first, "10.0.0.5:80");
    uint32_t first_index = std::stoi(first.substr(7)) - 1;
    std::string second = table.pick(key, {first_index});
    ASSERT_NE(second, first);
    ASSERT_NE(second, "10.0.0.5:80");
    ASSERT_EQ(table.pick(key, {first_index}), second);
    ++retry_targets[second];
    ASSERT_EQ(table.pick(key, {0, 1, 2, 3}), first);
  }
  EXPECT_EQ(retry_targets.size(), 4u);
}

TYPED_TEST_P(ConsistentHashTest, EmptyKeyFallsBackToWeightedRandom) {
  testing::seedRandom(17);
  typename TestFixture::Instance table;
  table.setHosts({{"a", 1}, {"b", 3}, {"c", 9, false}});
  std::map<std::string, int> counts;
  for (int i = 0; i < 40000; ++i) ++counts[table.pick("")];
  EXPECT_EQ(counts.count("c"), 0u);
  EXPECT_NEAR(counts["a"], 10000, 400);  // 4% relative
  EXPECT_NEAR(counts["b"], 30000, 400);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(table.pick("", {1}), "a");
}

TYPED_TEST_P(ConsistentHashTest, NoHealthyHostMeansNone) {
  typename TestFixture::Instance table;
  table.setHosts({});
  EXPECT_EQ(table.pick("k"), "NONE");
  EXPECT_EQ(table.pick(""), "NONE");
  table.setHosts({{"a", 1, false}, {"b", 1, false}});
  EXPECT_EQ(table.pick("k"), "NONE");
  EXPECT_EQ(table.pick("k", {0}), "NONE");
  EXPECT_EQ(table.pick(""), "NONE");
}

REGISTER_TYPED_TEST_SUITE_P(ConsistentHashTest, DistributionFollowsWeights,
                            AnUnhealthyHostsKeysMoveAndComeBack,
                            SameKeySameHostAcrossPicksWorkersAndSetOrder,
                            NoSkewAfterFiftyRandomHostSetChanges, AvoidsTriedAndUnhealthyHosts,
                            EmptyKeyFallsBackToWeightedRandom, NoHealthyHostMeansNone);

}  // namespace sluice::balancers
