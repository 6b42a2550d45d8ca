// concurrency_limit unit tests over the fake host. Counters are the process's, so every test
// uses its own route / cluster names.
#include "filters/concurrency_limit/concurrency_limit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters::concurrency_limit {
namespace {

using testing::FakeStream;
using testing::FilterHarness;

std::unique_ptr<FakeStream> onRoute(const std::string& route, const std::string& cluster = "c") {
  auto s = std::make_unique<FakeStream>();
  s->attributes[SLUICE_ATTR_ROUTE_NAME] = route;
  s->attributes[SLUICE_ATTR_CLUSTER_NAME] = cluster;
  s->attributes[SLUICE_ATTR_LISTENER_NAME] = "edge";
  return s;
}

TEST(ConcurrencyLimitTest, RejectsTheRequestOverMaxAndGivesTheSlotBackAtTheEnd) {
  FilterHarness h(sluice_plugin_entry(), "max: 2\nretry_after: 3\n");
  ASSERT_TRUE(h.configured()) << h.error();
  auto a = onRoute("t1"), b = onRoute("t1"), c = onRoute("t1");
  EXPECT_EQ(h.requestHeaders(*a), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(h.requestHeaders(*b), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(sharedCounter(Per::kRoute, "t1")->load(), 2);
  ASSERT_EQ(h.requestHeaders(*c), SLUICE_FILTER_STOP);
  ASSERT_TRUE(c->local_reply.has_value());
  EXPECT_EQ(c->local_reply->status, 503u);
  EXPECT_EQ(c->local_reply->body,
            "{\"status\":503,\"error\":\"Service Unavailable\",\"detail\":\"concurrency limit "
            "reached\"}\n");
  EXPECT_EQ(c->local_reply->content_type, "application/json");
  EXPECT_EQ(c->replyHeader("Retry-After"), "3");
  h.finish(*c);  // the rejected request's end gives back nothing it did not take
  EXPECT_EQ(sharedCounter(Per::kRoute, "t1")->load(), 2);
  h.finish(*a);  // on_log: whatever the reason the request ended
  EXPECT_EQ(sharedCounter(Per::kRoute, "t1")->load(), 1);
  auto d = onRoute("t1");
  EXPECT_EQ(h.requestHeaders(*d), SLUICE_FILTER_CONTINUE);
  h.finish(*b);
  h.finish(*d);
  EXPECT_EQ(sharedCounter(Per::kRoute, "t1")->load(), 0);
}

TEST(ConcurrencyLimitTest, TheSlotComesBackWhenTheStreamIsDestroyedWithoutOnLog) {
  FilterHarness h(sluice_plugin_entry(), "max: 1\n");
  const sluice_filter_plugin& hooks = h.hooks();
  auto s = onRoute("t2");
  void* self = hooks.stream_create(h.worker(), s->handle());
  EXPECT_EQ(hooks.on_request_headers(self, s->handle(), 1), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(sharedCounter(Per::kRoute, "t2")->load(), 1);
  hooks.stream_destroy(self);
  EXPECT_EQ(sharedCounter(Per::kRoute, "t2")->load(), 0);
  // And on_log then destroy gives it back once, not twice.
  self = hooks.stream_create(h.worker(), s->handle());
  hooks.on_request_headers(self, s->handle(), 1);
  hooks.on_log(self, s->handle());
  hooks.stream_destroy(self);
  EXPECT_EQ(sharedCounter(Per::kRoute, "t2")->load(), 0);
}

TEST(ConcurrencyLimitTest, KeysArePerRouteClusterOrListener) {
  FilterHarness by_route(sluice_plugin_entry(), "max: 1\n");
  auto a = onRoute("t3-a", "t3-c"), b = onRoute("t3-b", "t3-c");
  EXPECT_EQ(by_route.requestHeaders(*a), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(by_route.requestHeaders(*b), SLUICE_FILTER_CONTINUE);  // another route
  FilterHarness by_cluster(sluice_plugin_entry(), "max: 1\nper: cluster\nretry_after: 0\n");
  auto c = onRoute("t3-a", "t3-c"), d = onRoute("t3-b", "t3-c"), e = onRoute("t3-b", "t3-d");
  EXPECT_EQ(by_cluster.requestHeaders(*c), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(by_cluster.requestHeaders(*d), SLUICE_FILTER_STOP);  // same cluster
  EXPECT_FALSE(d->replyHeader("Retry-After").has_value());       // retry_after: 0
  EXPECT_EQ(by_cluster.requestHeaders(*e), SLUICE_FILTER_CONTINUE);
  FilterHarness by_listener(sluice_plugin_entry(), "max: 2\nper: listener\n");
  auto f = onRoute("x"), g = onRoute("y"), i = onRoute("z");
  f->attributes[SLUICE_ATTR_LISTENER_NAME] = g->attributes[SLUICE_ATTR_LISTENER_NAME] =
      i->attributes[SLUICE_ATTR_LISTENER_NAME] = "t3-l";
  EXPECT_EQ(by_listener.requestHeaders(*f), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(by_listener.requestHeaders(*g), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(by_listener.requestHeaders(*i), SLUICE_FILTER_STOP);
}

// A reload's new config instance sees the requests still running on the old one.
TEST(ConcurrencyLimitTest, InFlightCountsSurviveANewConfigInstance) {
  auto old_instance = std::make_unique<FilterHarness>(sluice_plugin_entry(), "max: 2\n");
  auto a = onRoute("t4"), b = onRoute("t4");
  old_instance->requestHeaders(*a);
  old_instance->requestHeaders(*b);
  FilterHarness reloaded(sluice_plugin_entry(), "max: 3\n");
  auto c = onRoute("t4"), d = onRoute("t4");
  EXPECT_EQ(reloaded.requestHeaders(*c), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(reloaded.requestHeaders(*d), SLUICE_FILTER_STOP);  // 2 old + 1 new = 3
  old_instance.reset();  // the old requests end with their snapshot
  EXPECT_EQ(sharedCounter(Per::kRoute, "t4")->load(), 1);
}

TEST(ConcurrencyLimitTest, ThreadsNeverExceedMax) {
  FilterHarness h(sluice_plugin_entry(), "max: 3\n");
  const sluice_filter_plugin& hooks = h.hooks();
  std::atomic<int64_t> peak{0}, holders{0};
  std::atomic<int> admitted{0}, rejected{0};
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      void* worker = hooks.worker_create(h.config(), w);
      for (int i = 0; i < 5000; ++i) {
        auto s = onRoute("t5");
        void* self = hooks.stream_create(worker, s->handle());
        bool ok = hooks.on_request_headers(self, s->handle(), 1) == SLUICE_FILTER_CONTINUE;
        if (ok) {
          // Holders counted between admission and release: never more than max at once (the
          // shared counter itself may pass max for an instant while a rejection undoes its +1).
          admitted++;
          int64_t now = ++holders;
          int64_t seen = peak.load();
          while (now > seen && !peak.compare_exchange_weak(seen, now)) {
          }
          --holders;
        } else {
          rejected++;
        }
        hooks.on_log(self, s->handle());
        hooks.stream_destroy(self);
      }
      hooks.worker_destroy(worker);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(admitted + rejected, 20000);
  EXPECT_EQ(sharedCounter(Per::kRoute, "t5")->load(), 0);
}

TEST(ConcurrencyLimitTest, RefusesBadConfigs) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  for (const Case& c : {
           Case{"", "'max' is required (in-flight requests per key)"},
           Case{"max: 0\n", "expected an integer from 1 to 1000000000"},
           Case{"max: 5\nper: host\n", "expected route, cluster or listener"},
           Case{"max: 5\nretry_after: -1\n", "expected an integer from 0 to 86400"},
           Case{"max: 5\nlimit: 3\n",
                "unknown key 'limit' (expected one of: max, per, retry_after)"},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error(), c.message) << c.yaml;
  }
}

}  // namespace
}  // namespace sluice::filters::concurrency_limit
