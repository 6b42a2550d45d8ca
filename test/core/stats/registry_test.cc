// The registry: series by labels, per-thread stores summed on scrape, series lifetime, clashes.
#include "core/stats/registry.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace sluice::stats {
namespace {

const FamilySpec kRequests{Kind::kCounter, "test_requests_total", "Requests.", {"listener"}};
const FamilySpec kOpen{Kind::kGauge, "test_open", "Open things.", {}};
const FamilySpec kLatency{Kind::kHistogram, "test_latency_seconds", "Latency.", {"host"}};

// The line of `text` that starts with `prefix` followed by a space, without the prefix.
std::string sample(const std::string& text, const std::string& prefix) {
  size_t at = text.find("\n" + prefix + " ");
  if (at == std::string::npos) return "<absent>";
  size_t start = at + prefix.size() + 2;
  return text.substr(start, text.find('\n', start) - start);
}

std::string scrape(const Registry& r) {
  std::string out = "\n";
  r.writePrometheus(&out);
  return out;
}

TEST(Registry, CountsFromManyThreadStoresAreSummed) {
  Registry r;
  Counter edge = r.counter(kRequests, {"edge"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    Store* store = r.newThreadStore();
    threads.emplace_back([&r, store, edge] {
      r.bindThread(store);
      for (int i = 0; i < 1000; ++i) edge.inc();
      r.bindThread(nullptr);
    });
  }
  // An unbound thread writes the shared store with atomic adds.
  threads.emplace_back([edge] {
    for (int i = 0; i < 500; ++i) edge.inc(2);
  });
  for (auto& t : threads) t.join();
  EXPECT_EQ(r.sum("test_requests_total"), 5000);
  EXPECT_EQ(sample(scrape(r), "test_requests_total{listener=\"edge\"}"), "5000");
}

TEST(Registry, SameLabelsSameSeriesWhileAHandleLives) {
  Registry r;
  Counter a = r.counter(kRequests, {"edge"});
  a.inc(3);
  Counter again = r.counter(kRequests, {"edge"});  // e.g. a listener rebuilt by a reload
  again.inc();
  Counter other = r.counter(kRequests, {"internal"});
  other.inc(7);
  EXPECT_EQ(r.sum("test_requests_total", "listener", "edge"), 4);
  EXPECT_EQ(r.sum("test_requests_total", "listener", "internal"), 7);
  EXPECT_EQ(r.seriesCount(), 2u);
}

TEST(Registry, SeriesGoWithTheirLastHandleAndSlotsStartAtZeroWhenReused) {
  Registry r;
  {
    Counter gone = r.counter(kRequests, {"10.0.0.1:80"});
    gone.inc(42);
    EXPECT_EQ(sample(scrape(r), "test_requests_total{listener=\"10.0.0.1:80\"}"), "42");
  }
  std::string text = scrape(r);
  EXPECT_EQ(sample(text, "test_requests_total{listener=\"10.0.0.1:80\"}"), "<absent>");
  EXPECT_NE(text.find("# TYPE test_requests_total counter"), std::string::npos);
  EXPECT_EQ(r.seriesCount(), 0u);
  // Churn does not grow memory: a new series takes the freed slot, starting from zero.
  for (int i = 0; i < 100; ++i) {
    Counter c = r.counter(kRequests, {"host" + std::to_string(i)});
    EXPECT_EQ(r.sum("test_requests_total"), 0);
    c.inc();
  }
  EXPECT_EQ(r.seriesCount(), 0u);
}

TEST(Registry, GaugesAddAcrossThreadsAndSharedGaugesSetExactly) {
  Registry r;
  Gauge g = r.gauge(kOpen, {});
  g.inc();
  g.inc();
  g.dec();
  std::thread([&r, g] {
    r.bindThread(r.newThreadStore());
    g.add(-5);
  }).join();
  EXPECT_EQ(r.sum("test_open"), -4);
  EXPECT_EQ(sample(scrape(r), "test_open"), "-4");

  const FamilySpec state{Kind::kGauge, "test_state", "State.", {}};
  Gauge s = r.sharedGauge(state, {});
  s.set(1);
  std::thread([&r, s] {
    r.bindThread(r.newThreadStore());
    s.set(0);
  }).join();
  EXPECT_EQ(r.sum("test_state"), 0);
}

TEST(Registry, HistogramBucketsSumAndCount) {
  Registry r;
  Histogram h = r.histogram(kLatency, {"a"});
  h.observeMicros(100);  // 0.0001 s  → le 0.0005
  h.observeMicros(500);  // exactly on a bound: counted in that bucket
  h.observe(0.003);      // → le 0.005
  h.observe(120);        // beyond the last bound → +Inf only
  std::string text = scrape(r);
  const std::string p = "test_latency_seconds_bucket{host=\"a\",le=";
  EXPECT_EQ(sample(text, p + "\"0.0005\"}"), "2");
  EXPECT_EQ(sample(text, p + "\"0.001\"}"), "2");
  EXPECT_EQ(sample(text, p + "\"0.005\"}"), "3");
  EXPECT_EQ(sample(text, p + "\"60\"}"), "3");
  EXPECT_EQ(sample(text, p + "\"+Inf\"}"), "4");
  EXPECT_EQ(sample(text, "test_latency_seconds_count{host=\"a\"}"), "4");
  EXPECT_EQ(sample(text, "test_latency_seconds_sum{host=\"a\"}"), "120.0036");
  EXPECT_NE(text.find("# TYPE test_latency_seconds histogram"), std::string::npos);
}

TEST(Registry, CustomBuckets) {
  Registry r;
  const Buckets sizes = {1, 10, 100};
  const FamilySpec f{Kind::kHistogram, "test_sizes", "Sizes.", {}, &sizes};
  Histogram h = r.histogram(f, {});
  h.observe(5);
  h.observe(50);
  std::string text = scrape(r);
  EXPECT_EQ(sample(text, "test_sizes_bucket{le=\"1\"}"), "0");
  EXPECT_EQ(sample(text, "test_sizes_bucket{le=\"10\"}"), "1");
  EXPECT_EQ(sample(text, "test_sizes_bucket{le=\"100\"}"), "2");
  EXPECT_EQ(sample(text, "test_sizes_sum"), "55");
}

TEST(Registry, ClashingOrInvalidFamiliesAreRefusedAndTheirHandlesDoNothing) {
  Registry r;
  std::string error;
  EXPECT_TRUE(r.declare(kRequests, &error));
  EXPECT_FALSE(r.declare({Kind::kGauge, "test_requests_total", "x", {"listener"}}, &error));
  EXPECT_NE(error.find("already exists as a counter"), std::string::npos) << error;
  EXPECT_FALSE(r.declare({Kind::kCounter, "test_requests_total", "x", {"cluster"}}, &error));
  EXPECT_FALSE(r.declare({Kind::kCounter, "bad-name", "x", {}}, &error));
  EXPECT_FALSE(r.declare({Kind::kCounter, "test_x", "x", {"__reserved"}}, &error));
  EXPECT_FALSE(r.declare({Kind::kHistogram, "test_h", "x", {"le"}}, &error));
  const Buckets descending = {2, 1};
  EXPECT_FALSE(r.declare({Kind::kHistogram, "test_h", "x", {}, &descending}, &error));

  Counter detached = r.counter({Kind::kCounter, "test_requests_total", "x", {"cluster"}}, {"a"});
  detached.inc();
  Counter wrong_arity = r.counter(kRequests, {"a", "b"});
  wrong_arity.inc();
  EXPECT_EQ(r.sum("test_requests_total"), 0);
  EXPECT_EQ(r.seriesCount(), 0u);
}

TEST(Registry, LabelValuesAreEscaped) {
  Registry r;
  Counter c = r.counter(kRequests, {"a\"b\\c\nd"});
  c.inc();
  EXPECT_EQ(sample(scrape(r), "test_requests_total{listener=\"a\\\"b\\\\c\\nd\"}"), "1");
}

}  // namespace
}  // namespace sluice::stats
