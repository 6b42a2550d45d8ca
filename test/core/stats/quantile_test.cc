// Percentiles from fixed buckets (quantile.h), and the registry's histogram and multi-label sums
// that GET /stats/summary is built from.
#include "core/stats/quantile.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/stats/registry.h"

namespace sluice::stats {
namespace {

HistogramSnapshot snapshot(Buckets bounds, std::vector<uint64_t> counts) {
  HistogramSnapshot h;
  h.bounds = std::move(bounds);
  h.counts = std::move(counts);
  return h;
}

TEST(Quantile, NoObservationsHasNoQuantile) {
  EXPECT_FALSE(quantile(snapshot({0.1, 1}, {0, 0, 0}), 0.5).has_value());
  EXPECT_FALSE(quantile(HistogramSnapshot{}, 0.5).has_value());
}

TEST(Quantile, InterpolatesLinearlyInsideTheBucketHoldingTheRank) {
  // 10 observations in (0, 0.1], 10 in (0.1, 1]: the median is the top of the first bucket,
  // p75 halfway through the second, p90 at 80% of it.
  HistogramSnapshot h = snapshot({0.1, 1}, {10, 10, 0});
  EXPECT_DOUBLE_EQ(*quantile(h, 0.5), 0.1);
  EXPECT_DOUBLE_EQ(*quantile(h, 0.75), 0.55);
  EXPECT_DOUBLE_EQ(*quantile(h, 0.9), 0.1 + 0.9 * 0.8);
  EXPECT_DOUBLE_EQ(*quantile(h, 0.25), 0.05);  // the first bucket starts at 0
  EXPECT_DOUBLE_EQ(*quantile(h, 0), 0);
  EXPECT_DOUBLE_EQ(*quantile(h, 1), 1);
}

TEST(Quantile, EmptyBucketsAreSkipped) {
  // Everything in (0.25, 0.5]: every quantile lies there, none in the empty buckets around it.
  HistogramSnapshot h = snapshot({0.1, 0.25, 0.5, 1}, {0, 0, 4, 0, 0});
  EXPECT_DOUBLE_EQ(*quantile(h, 0.5), 0.375);
  EXPECT_DOUBLE_EQ(*quantile(h, 0.99), 0.25 + 0.25 * 0.99);
  EXPECT_DOUBLE_EQ(*quantile(h, 0.01), 0.25 + 0.25 * 0.01);
}

TEST(Quantile, TheInfBucketAnswersTheLargestFiniteBound) {
  HistogramSnapshot h = snapshot({0.1, 1}, {1, 0, 9});
  EXPECT_DOUBLE_EQ(*quantile(h, 0.99), 1);
  EXPECT_DOUBLE_EQ(*quantile(h, 0.05), 0.05);
}

TEST(Quantile, MismatchedCountsHaveNoQuantile) {
  EXPECT_FALSE(quantile(snapshot({0.1, 1}, {1, 2}), 0.5).has_value());
}

const FamilySpec kLatency{Kind::kHistogram, "q_latency_seconds", "Latency.", {"listener"}};
const FamilySpec kResponses{
    Kind::kCounter, "q_responses_total", "Responses.", {"listener", "status_class"}};

TEST(RegistryHistogramSum, SumsTheBucketsOfMatchingSeries) {
  Registry r;
  Histogram a = r.histogram(kLatency, {"a"});
  Histogram b = r.histogram(kLatency, {"b"});
  a.observe(0.0003);  // first bucket (<= 0.5 ms)
  a.observe(0.004);   // (2.5 ms, 5 ms]
  b.observe(100);     // +Inf
  HistogramSnapshot h;
  ASSERT_TRUE(r.histogramSum(kLatency.name, "listener", "a", &h));
  EXPECT_EQ(h.bounds, latencyBuckets());
  ASSERT_EQ(h.counts.size(), latencyBuckets().size() + 1);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.counts[0], 1u);
  EXPECT_EQ(h.counts[3], 1u);
  EXPECT_NEAR(h.sum, 0.0043, 1e-9);

  ASSERT_TRUE(r.histogramSum(kLatency.name, "", "", &h));
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.counts.back(), 1u);
  EXPECT_NEAR(h.sum, 100.0043, 1e-9);

  ASSERT_TRUE(r.histogramSum(kLatency.name, "listener", "none", &h));
  EXPECT_EQ(h.count(), 0u);
  EXPECT_FALSE(r.histogramSum("q_unknown_seconds", "", "", &h));
  EXPECT_FALSE(r.histogramSum(kLatency.name, "host", "a", &h));  // not a label of the family
  r.counter(kResponses, {"a", "2xx"});
  EXPECT_FALSE(r.histogramSum(kResponses.name, "", "", &h));  // not a histogram
}

TEST(RegistrySum, MatchesEveryGivenLabel) {
  Registry r;
  Counter a2 = r.counter(kResponses, {"a", "2xx"});  // handles keep their series alive
  Counter a5 = r.counter(kResponses, {"a", "5xx"});
  Counter b5 = r.counter(kResponses, {"b", "5xx"});
  a2.inc(5);
  a5.inc(2);
  b5.inc(7);
  EXPECT_EQ(r.sum(kResponses.name, LabelMatch{{"listener", "a"}, {"status_class", "5xx"}}), 2);
  EXPECT_EQ(r.sum(kResponses.name, LabelMatch{{"status_class", "5xx"}}), 9);
  EXPECT_EQ(r.sum(kResponses.name, LabelMatch{}), 14);
  EXPECT_EQ(r.sum(kResponses.name, LabelMatch{{"host", "a"}}), 0);
  EXPECT_EQ(r.sum(kResponses.name, "listener", "b"), 7);  // the one-label form agrees
}

}  // namespace
}  // namespace sluice::stats
