// HostWeights (balancers/common/host_weights.h) on its own: weights, layout changes, the
// tried-host rule and the weighted random pick from given random bits.
#include "balancers/common/host_weights.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "test/balancers/testing/fake_host.h"

namespace sluice::balancers {
namespace {

using testing::FakeHost;
using testing::FakeHostSet;
using testing::FakePick;

// The random bits that HostWeights::uniform maps to `r` in [0, bound).
uint64_t bitsFor(uint64_t r, uint64_t bound) {
  return static_cast<uint64_t>(((static_cast<unsigned __int128>(r) << 64) + bound - 1) / bound);
}

TEST(HostWeightsTest, NoHostOrNoHealthyHostIsNoneHealthy) {
  HostWeights weights;
  EXPECT_FALSE(weights.anyHealthy());
  FakeHostSet down({{"a", 5, false}});
  weights.assign(down.view());
  EXPECT_FALSE(weights.anyHealthy());
  FakeHostSet up({{"a", 5, false}, {"b", 1}});
  weights.assign(up.view());
  EXPECT_TRUE(weights.anyHealthy());
}

TEST(HostWeightsTest, LayoutChangesWithAddressesAndWeightsNotWithHealth) {
  HostWeights weights;
  FakeHostSet first({{"a", 1}, {"b", 0}});
  EXPECT_TRUE(weights.assignWithLayout(first.view()));
  EXPECT_EQ(weights.layout(), (HostWeights::Layout{{"a", 1}, {"b", 1}}));  // weight at least 1
  FakeHostSet same({{"a", 1}, {"b", 1, false}});
  EXPECT_FALSE(weights.assignWithLayout(same.view()));
  EXPECT_FALSE(weights.eligible(1, FakePick().view(), false));  // health still taken
  FakeHostSet heavier({{"a", 2}, {"b", 1}});
  EXPECT_TRUE(weights.assignWithLayout(heavier.view()));
  FakeHostSet reordered({{"b", 1}, {"a", 2}});
  EXPECT_TRUE(weights.assignWithLayout(reordered.view()));
  weights.assign(first.view());  // assign() alone keeps the layout
  EXPECT_EQ(weights.layout(), (HostWeights::Layout{{"b", 1}, {"a", 2}}));
}

TEST(HostWeightsTest, TriedHostsAreAvoidedWhileAnUntriedHealthyOneExists) {
  HostWeights weights;
  FakeHostSet set({{"a", 1}, {"b", 1}, {"c", 1, false}});
  weights.assign(set.view());
  EXPECT_FALSE(weights.avoidTried(FakePick().view()));
  EXPECT_TRUE(weights.avoidTried(FakePick({0}).view()));
  EXPECT_TRUE(weights.avoidTried(FakePick({2}).view()));      // only an unhealthy one tried
  EXPECT_FALSE(weights.avoidTried(FakePick({1, 0}).view()));  // every healthy one tried
  FakePick tried_a({0});
  EXPECT_FALSE(weights.eligible(0, tried_a.view(), true));
  EXPECT_TRUE(weights.eligible(0, tried_a.view(), false));
  EXPECT_TRUE(weights.eligible(1, tried_a.view(), true));
  EXPECT_FALSE(weights.eligible(2, tried_a.view(), false));
}

TEST(HostWeightsTest, PickRandomSplitsTheBitsByEligibleWeight) {
  HostWeights weights;
  FakeHostSet set({{"a", 1}, {"b", 3}, {"c", 9, false}, {"d", 4}});
  weights.assign(set.view());
  FakePick none;
  // Total 8: [0, 1) a, [1, 4) b, [4, 8) d.
  const std::vector<int64_t> expected = {0, 1, 1, 1, 3, 3, 3, 3};
  for (uint64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(weights.pickRandom(none.view(), false, bitsFor(r, 8)), expected[r]) << r;
  }
  EXPECT_EQ(weights.pickRandom(none.view(), false, UINT64_MAX), 3);
  // b tried: total 5, [0, 1) a, [1, 5) d.
  FakePick tried_b({1});
  EXPECT_EQ(weights.pickRandom(tried_b.view(), true, bitsFor(0, 5)), 0);
  EXPECT_EQ(weights.pickRandom(tried_b.view(), true, bitsFor(1, 5)), 3);
  EXPECT_EQ(weights.pickRandom(tried_b.view(), true, UINT64_MAX), 3);
}

}  // namespace
}  // namespace sluice::balancers
