// maglev unit tests: the balancer class called directly (no dlopen) over fake host sets,
// 100k distinct keys ("key-0" ..) per mapping. The tests every consistent-hash balancer passes
// are in test/balancers/testing/consistent_hash_tests.h; here, maglev's own.
#include "balancers/maglev/maglev.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "test/balancers/testing/consistent_hash_tests.h"
#include "test/balancers/testing/fake_host.h"
#include "test/balancers/testing/key_mapping.h"

namespace sluice::balancers {
namespace {

using testing::FakeHost;
using testing::movedFraction;
using testing::numberedHosts;
using testing::weightedHosts;

struct MaglevTraits {
  using Config = MaglevConfig;
  using Balancer = Maglev;
  // Each host's share of 100k keys within 5% relative of its weight share (measured worst: 2.9%
  // for 10 equal hosts, 1.2% for weights 1..5). The table is exact
  // (TableSlotsFollowWeightsWithinOneSlot); what remains is the spread of 100k keys over its slots
  // (about 1% per 10k keys).
  static constexpr double kShareTolerance = 0.05;
  // An unhealthy host's keys are rehashed, so they spread over all the others by weight: each of
  // the 9 other (equal) hosts receives within 15% relative of an even split.
  static void expectUnhealthyKeysSpread(const std::map<std::string, int>& receivers) {
    ASSERT_EQ(receivers.size(), 9u);
    size_t moved = 0;
    for (const auto& [address, n] : receivers) moved += n;
    for (const auto& [address, n] : receivers) EXPECT_NEAR(n, moved / 9.0, moved / 9.0 * 0.15);
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Maglev, ConsistentHashTest, MaglevTraits);

using Table = testing::HashBalancerInstance<MaglevConfig, Maglev>;

// Slots per address.
std::map<std::string, size_t> slotsPerAddress(Table& t) {
  std::map<std::string, size_t> out;
  for (uint32_t i : t.balancer().table()) ++out[t.hosts()[i].address];
  return out;
}

// The table itself: equal hosts get table_size / hosts slots within one (6553..6554 of 65537
// for 10); weighted hosts get weight / total of the slots within one (Envoy's weighted fill:
// measured 4370, 8739, 13107, 17476, 21845 for weights 1..5).
TEST(MaglevTest, TableSlotsFollowWeightsWithinOneSlot) {
  Table ten;
  ten.setHosts(numberedHosts(10));
  for (const auto& [address, n] : slotsPerAddress(ten)) EXPECT_NEAR(n, 6553.7, 1) << address;
  Table weighted;
  weighted.setHosts(weightedHosts({1, 2, 3, 4, 5}));
  for (const auto& [address, n] : slotsPerAddress(weighted)) {
    EXPECT_NEAR(n, 65537.0 * (address[7] - '0') / 15, 1) << address;
  }
}

// One host far heavier than the average (here 20000 against 200 hosts of weight 1) takes the
// heap-ordered fill. Every host claims a slot in turn 0, so each light host rounds its share up
// (4 slots for an ideal 3.24) and the heavy host gives up about that much: light hosts within one
// slot of their weight share, the heavy one within one slot per other host (measured: 151 below
// its 64888, 0.23%). The same table whatever the order of the set.
TEST(MaglevTest, SkewedWeightsStillFillByWeight) {
  auto hosts = numberedHosts(200, 1, 2);
  hosts.push_back({"10.0.0.1:80", 20000});
  Table table;
  table.setHosts(hosts);
  auto slots = slotsPerAddress(table);
  ASSERT_EQ(slots.size(), 201u);
  for (const FakeHost& h : hosts) {
    double ideal = 65537.0 * h.weight / 20200;
    EXPECT_NEAR(slots[h.address], ideal, h.weight == 1 ? 1 : 200) << h.address;
  }
  std::reverse(hosts.begin(), hosts.end());
  Table reversed;
  reversed.setHosts(hosts);
  EXPECT_EQ(slotsPerAddress(reversed), slots);
  EXPECT_EQ(reversed.map(10000), table.map(10000));
}

// Adding an 11th host to 10 moves about 1/11 of the keys: measured 9.35% against the ideal
// 9.09% (bound: 1.3 x ideal); keys moving between old hosts: measured 0.3% (bound 1%).
TEST(MaglevTest, AddingAHostMovesAboutItsShare) {
  Table table;
  table.setHosts(numberedHosts(10));
  auto before = table.map();
  table.setHosts(numberedHosts(11));
  auto after = table.map();
  EXPECT_LE(movedFraction(before, after), 1.3 / 11);
  EXPECT_GE(movedFraction(before, after), 1.0 / 11 * 0.9);
  size_t between_old = 0;
  for (size_t i = 0; i < testing::kHashTestKeys; ++i) {
    between_old += before[i] != after[i] && after[i] != "10.0.0.11:80";
  }
  EXPECT_LE(between_old, testing::kHashTestKeys / 100);
}

// Removing one host of 10 moves all its keys and few others: measured 10.5% moved, of which
// 0.21% between staying hosts (bound: 1% of the keys, and at most 1.2 x the ideal 1/10 in all).
TEST(MaglevTest, RemovingAHostMovesItsKeysAndFewOthers) {
  Table table;
  table.setHosts(numberedHosts(10));
  auto before = table.map();
  auto hosts = numberedHosts(10);
  hosts.erase(hosts.begin() + 4);  // 10.0.0.5:80
  table.setHosts(hosts);
  auto after = table.map();
  size_t others = 0;
  for (size_t i = 0; i < testing::kHashTestKeys; ++i) {
    if (before[i] == "10.0.0.5:80") {
      ASSERT_NE(after[i], before[i]);
    } else {
      others += before[i] != after[i];
    }
  }
  EXPECT_LE(others, testing::kHashTestKeys / 100);
  EXPECT_LE(movedFraction(before, after), 1.2 / 10);
}

// One healthy host of 200: 16 rehashes usually miss it, the linear walk still finds it.
TEST(MaglevTest, LinearWalkFindsTheOnlyHealthyHost) {
  Table table;
  auto many = numberedHosts(200);
  for (size_t i = 1; i < many.size(); ++i) many[i].healthy = false;
  table.setHosts(many);
  for (size_t k = 0; k < 200; ++k) ASSERT_EQ(table.pick(testing::testKey(k)), "10.0.0.1:80");
}

// More hosts than slots: some hosts get no slot (logged); keys still map, and a host without a
// slot is still picked when it is the only eligible one.
TEST(MaglevTest, MoreHostsThanSlots) {
  Table table("table_size: 7\n");
  auto hosts = numberedHosts(10);
  table.setHosts(hosts);
  EXPECT_EQ(slotsPerAddress(table).size(), 7u);
  for (const std::string& a : table.map(1000)) ASSERT_NE(a, "NONE");
  std::string slotless;
  for (const FakeHost& h : hosts) {
    if (slotsPerAddress(table).count(h.address) == 0) slotless = h.address;
  }
  ASSERT_FALSE(slotless.empty());
  for (FakeHost& h : hosts) h.healthy = h.address == slotless;
  table.setHosts(hosts);
  EXPECT_EQ(table.pick("any"), slotless);
}

}  // namespace
}  // namespace sluice::balancers
