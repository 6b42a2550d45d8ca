// PeakEwma unit tests: peak sensitivity and decay in time.
#include "balancers/p2c/peak_ewma.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sluice::balancers {
namespace {

constexpr double kDecay = 10e6;  // 10 s in microseconds

TEST(PeakEwmaTest, ZeroUntilTheFirstSampleWhichItTakesAsIs) {
  PeakEwma e;
  EXPECT_FALSE(e.sampled());
  EXPECT_EQ(e.value(5'000'000, kDecay), 0);
  e.observe(2000, 5'000'000, kDecay);
  EXPECT_TRUE(e.sampled());
  EXPECT_DOUBLE_EQ(e.value(5'000'000, kDecay), 2000);
}

TEST(PeakEwmaTest, APeakReplacesTheValueAtOnceALowSampleBlendsInByElapsedTime) {
  PeakEwma e;
  e.observe(1000, 0, kDecay);
  e.observe(50000, 1, kDecay);  // a peak: taken at once
  EXPECT_DOUBLE_EQ(e.value(1, kDecay), 50000);
  // A low sample 10 s (one time constant) later: w = e^-1 of the old value stays.
  e.observe(1000, 10'000'001, kDecay);
  double w = std::exp(-1.0);
  EXPECT_NEAR(e.value(10'000'001, kDecay), 50000 * w + 1000 * (1 - w), 1e-6);
}

TEST(PeakEwmaTest, DecaysTowardZeroWithoutSamplesAndReadingDoesNotChangeIt) {
  PeakEwma e;
  e.observe(8000, 1'000'000, kDecay);
  EXPECT_NEAR(e.value(11'000'000, kDecay), 8000 * std::exp(-1.0), 1e-6);
  EXPECT_NEAR(e.value(31'000'000, kDecay), 8000 * std::exp(-3.0), 1e-6);
  EXPECT_NEAR(e.value(11'000'000, kDecay), 8000 * std::exp(-1.0), 1e-6);
  // A clock that reads earlier than the last sample counts as no time.
  EXPECT_DOUBLE_EQ(e.value(0, kDecay), 8000);
}

}  // namespace
}  // namespace sluice::balancers
