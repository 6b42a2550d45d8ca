// The Prometheus text format helpers: names, escaping, values, lines.
#include "core/stats/text_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sluice::stats {
namespace {

TEST(TextFormat, MetricAndLabelNames) {
  EXPECT_TRUE(isMetricName("sluice_downstream_requests_total"));
  EXPECT_TRUE(isMetricName("a:b_c"));
  EXPECT_FALSE(isMetricName(""));
  EXPECT_FALSE(isMetricName("9lives"));
  EXPECT_FALSE(isMetricName("dash-ed"));
  EXPECT_TRUE(isLabelName("status_class"));
  EXPECT_FALSE(isLabelName("a:b"));
  EXPECT_FALSE(isLabelName("__name__"));
}

TEST(TextFormat, Escaping) {
  EXPECT_EQ(escapeLabelValue("plain"), "plain");
  EXPECT_EQ(escapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escapeHelp("a\\b\"c\nd"), "a\\\\b\"c\\nd");  // quotes stay in help text
}

TEST(TextFormat, Values) {
  EXPECT_EQ(formatValue(0), "0");
  EXPECT_EQ(formatValue(-3), "-3");
  EXPECT_EQ(formatValue(1796114226), "1796114226");
  EXPECT_EQ(formatValue(0.0005), "0.0005");
  EXPECT_EQ(formatValue(2.5), "2.5");
  EXPECT_EQ(formatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(formatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(formatValue(std::nan("")), "NaN");
}

TEST(TextFormat, HeaderAndSampleLines) {
  std::string out;
  appendHeader(&out, "x_total", "Things\nseen.", Kind::kCounter);
  appendSample(&out, "x_total", {}, "1");
  appendSample(&out, "x_total", {{"a", "1"}, {"b", "q\""}}, "2");
  EXPECT_EQ(out,
            "# HELP x_total Things\\nseen.\n"
            "# TYPE x_total counter\n"
            "x_total 1\n"
            "x_total{a=\"1\",b=\"q\\\"\"} 2\n");
}

}  // namespace
}  // namespace sluice::stats
