// slow_down (the example filter) over the fake host: per-worker pacing, the request context,
// the pause/timer/resume path and the 429 local reply with Retry-After. Time is the stream's
// start time (FakeStream::start_time_us; the fake host's clock stays at 0), so nothing here waits.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace {

using sluice::testing::FakeStream;
using sluice::testing::FilterHarness;

constexpr uint64_t kSecond = 1000000;  // µs

// A request from `ip` arriving at `at_us`.
std::unique_ptr<FakeStream> request(uint64_t at_us, const std::string& ip = "10.0.0.1") {
  auto s = std::make_unique<FakeStream>("GET", "/");
  s->start_time_us = at_us;
  s->client_address = ip + ":40000";
  return s;
}

TEST(SlowDownTest, RefusesBadConfigWithThePosition) {
  FilterHarness zero(sluice_plugin_entry(), "rate: 0\n");
  EXPECT_FALSE(zero.configured());
  EXPECT_NE(zero.error().find("rate"), std::string::npos) << zero.error();
  EXPECT_EQ(zero.errorLine(), 1u);

  FilterHarness unknown(sluice_plugin_entry(), "rate: 1\nmax_delay: 5\n");
  EXPECT_FALSE(unknown.configured());
  EXPECT_NE(unknown.error().find("unknown key 'max_delay'"), std::string::npos) << unknown.error();
  EXPECT_EQ(unknown.errorLine(), 2u);

  FilterHarness header(sluice_plugin_entry(), "delay_header: \"a b\"\n");
  EXPECT_FALSE(header.configured());
  EXPECT_NE(header.error().find("not a header name"), std::string::npos) << header.error();
}

TEST(SlowDownTest, FirstRequestPassesAndRecordsNoDelay) {
  FilterHarness h(sluice_plugin_entry(), "rate: 2\n");
  ASSERT_TRUE(h.configured()) << h.error();
  auto s = request(10 * kSecond);
  EXPECT_EQ(h.requestHeaders(*s), SLUICE_FILTER_CONTINUE);
  EXPECT_TRUE(s->timers.empty());
  EXPECT_EQ(s->context["slow_down.delay_ms"], "0");
  h.responseHeaders(*s);
  EXPECT_TRUE(s->values(SLUICE_HEADERS_RESPONSE, "X-Slow-Down-Delay-Ms").empty());
}

TEST(SlowDownTest, EarlyRequestIsPausedAndResumedByItsTimer) {
  FilterHarness h(sluice_plugin_entry(), "rate: 2\nmax_delay_ms: 2000\n");
  ASSERT_TRUE(h.configured()) << h.error();
  auto first = request(10 * kSecond);
  ASSERT_EQ(h.requestHeaders(*first), SLUICE_FILTER_CONTINUE);

  auto second = request(10 * kSecond + 100000);  // 100 ms later; its turn is at +500 ms
  EXPECT_EQ(h.requestHeaders(*second), SLUICE_FILTER_PAUSE);
  ASSERT_EQ(second->timers.size(), 1u);
  EXPECT_EQ(second->timers[0].delay_ms, 400u);
  EXPECT_EQ(second->context["slow_down.delay_ms"], "400");
  EXPECT_EQ(second->resumed, 0);
  EXPECT_FALSE(second->local_reply);

  EXPECT_EQ(h.fireTimers(*second), 1u);
  EXPECT_EQ(second->resumed, 1);
  EXPECT_FALSE(second->local_reply);
  second->response_status = 200;
  EXPECT_EQ(h.responseHeaders(*second), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(second->values(SLUICE_HEADERS_RESPONSE, "X-Slow-Down-Delay-Ms"),
            std::vector<std::string>{"400"});
}

TEST(SlowDownTest, TooLongAWaitIsAnswered429WithRetryAfter) {
  FilterHarness h(sluice_plugin_entry(), "rate: 0.1\nmax_delay_ms: 1000\n");  // one per 10 s
  ASSERT_TRUE(h.configured()) << h.error();
  auto first = request(100 * kSecond);
  ASSERT_EQ(h.requestHeaders(*first), SLUICE_FILTER_CONTINUE);
  auto second = request(101 * kSecond);  // its turn would be at 110 s: 9 s, 8 s over the limit
  EXPECT_EQ(h.requestHeaders(*second), SLUICE_FILTER_STOP);
  ASSERT_TRUE(second->local_reply);
  EXPECT_EQ(second->local_reply->status, 429u);
  EXPECT_EQ(second->local_reply->content_type, "application/json");
  EXPECT_EQ(second->replyHeader("Retry-After"), "8");
  EXPECT_NE(second->local_reply->body.find("\"retry_after_s\":8"), std::string::npos)
      << second->local_reply->body;
  EXPECT_TRUE(second->timers.empty());

  // A refused request takes no turn: at 109 s (1 s before the turn) one may wait again.
  auto third = request(109 * kSecond);
  EXPECT_EQ(h.requestHeaders(*third), SLUICE_FILTER_PAUSE);
  ASSERT_EQ(third->timers.size(), 1u);
  EXPECT_EQ(third->timers[0].delay_ms, 1000u);
}

TEST(SlowDownTest, TheTurnComesBackWithTime) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\n");
  for (uint64_t t = 1; t <= 5; ++t) {
    auto s = request(t * kSecond);
    EXPECT_EQ(h.requestHeaders(*s), SLUICE_FILTER_CONTINUE) << "at " << t << " s";
  }
}

TEST(SlowDownTest, BurstRequestsPassAtOnce) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nburst: 3\nmax_delay_ms: 5000\n");
  std::vector<std::unique_ptr<FakeStream>> streams;
  for (int i = 0; i < 3; ++i) {
    streams.push_back(request(kSecond));
    EXPECT_EQ(h.requestHeaders(*streams.back()), SLUICE_FILTER_CONTINUE) << i;
  }
  streams.push_back(request(kSecond));
  EXPECT_EQ(h.requestHeaders(*streams.back()), SLUICE_FILTER_PAUSE);
  ASSERT_EQ(streams.back()->timers.size(), 1u);
  EXPECT_EQ(streams.back()->timers[0].delay_ms, 1000u);
}

TEST(SlowDownTest, TheConsumerFromTheContextIsTheCaller) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nmax_delay_ms: 0\nexempt_consumers: [ops]\n");
  ASSERT_TRUE(h.configured()) << h.error();
  // Two consumers behind one address do not slow each other down...
  auto alice = request(kSecond);
  alice->context["consumer"] = "alice";
  auto bob = request(kSecond);
  bob->context["consumer"] = "bob";
  EXPECT_EQ(h.requestHeaders(*alice), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(h.requestHeaders(*bob), SLUICE_FILTER_CONTINUE);
  // ...nor does either of them the anonymous callers of that address.
  auto anonymous = request(kSecond);
  EXPECT_EQ(h.requestHeaders(*anonymous), SLUICE_FILTER_CONTINUE);
  // A consumer's second request in the same second is refused (max_delay_ms: 0).
  auto alice2 = request(kSecond);
  alice2->context["consumer"] = "alice";
  EXPECT_EQ(h.requestHeaders(*alice2), SLUICE_FILTER_STOP);
  EXPECT_EQ(alice2->local_reply->status, 429u);
  // An exempt consumer is never paced and gets no context key of this filter.
  for (int i = 0; i < 5; ++i) {
    auto ops = request(kSecond);
    ops->context["consumer"] = "ops";
    EXPECT_EQ(h.requestHeaders(*ops), SLUICE_FILTER_CONTINUE);
    EXPECT_EQ(ops->context.count("slow_down.delay_ms"), 0u);
  }
}

TEST(SlowDownTest, EachWorkerPacesOnItsOwn) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nmax_delay_ms: 0\n");
  ASSERT_TRUE(h.configured()) << h.error();
  auto first = request(kSecond);
  ASSERT_EQ(h.requestHeaders(*first), SLUICE_FILTER_CONTINUE);
  auto again = request(kSecond);
  ASSERT_EQ(h.requestHeaders(*again), SLUICE_FILTER_STOP);

  // Worker 1 of the same config: its own table, so the same caller passes there. Driven through
  // the hook table as the host does (FilterHarness only runs worker 0).
  const sluice_filter_plugin& hooks = h.hooks();
  void* worker1 = hooks.worker_create(h.config(), 1);
  ASSERT_NE(worker1, nullptr);
  auto other = request(kSecond);
  other->worker_index = 1;
  void* self = hooks.stream_create(worker1, other->handle());
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(hooks.on_request_headers(self, other->handle(), 1), SLUICE_FILTER_CONTINUE);
  EXPECT_FALSE(other->local_reply);
  hooks.on_log(self, other->handle());
  hooks.stream_destroy(self);
  hooks.worker_destroy(worker1);
}

TEST(SlowDownTest, WaitingRequestsAreBoundedPerWorkerAndFreedWhenTheyEnd) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nmax_delay_ms: 10000\nmax_waiting: 1\n");
  ASSERT_TRUE(h.configured()) << h.error();
  auto a = request(kSecond, "10.0.0.1");
  ASSERT_EQ(h.requestHeaders(*a), SLUICE_FILTER_CONTINUE);
  auto a2 = request(kSecond, "10.0.0.1");
  ASSERT_EQ(h.requestHeaders(*a2), SLUICE_FILTER_PAUSE);  // the one waiting slot
  auto b = request(kSecond, "10.0.0.2");
  EXPECT_EQ(h.requestHeaders(*b), SLUICE_FILTER_CONTINUE);  // no wait needed: not refused
  auto b2 = request(kSecond, "10.0.0.2");
  EXPECT_EQ(h.requestHeaders(*b2), SLUICE_FILTER_STOP);  // would wait, no slot
  EXPECT_EQ(b2->replyHeader("Retry-After"), "1");

  // The waiting client gives up: the host ends the stream (its timer is cancelled, onLog runs),
  // which frees the slot.
  h.finish(*a2);
  auto b3 = request(kSecond, "10.0.0.2");
  EXPECT_EQ(h.requestHeaders(*b3), SLUICE_FILTER_PAUSE);
}

TEST(SlowDownTest, CallersAreBoundedPerWorker) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nmax_delay_ms: 0\nmax_callers: 2\n");
  ASSERT_TRUE(h.configured()) << h.error();
  // Three callers in the same second: the third evicts one of the first two (none is idle).
  for (const char* ip : {"10.0.0.1", "10.0.0.2", "10.0.0.3"}) {
    auto s = request(kSecond, ip);
    EXPECT_EQ(h.requestHeaders(*s), SLUICE_FILTER_CONTINUE) << ip;
  }
  // One of the first two is forgotten: its second request passes, the other's is refused.
  auto one = request(kSecond, "10.0.0.1");
  auto two = request(kSecond, "10.0.0.2");
  int passed = (h.requestHeaders(*one) == SLUICE_FILTER_CONTINUE) +
               (h.requestHeaders(*two) == SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(passed, 1);
}

TEST(SlowDownTest, IPv6CallersAreKeyedByAddressWithoutPort) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nmax_delay_ms: 0\n");
  auto a = std::make_unique<FakeStream>();
  a->start_time_us = kSecond;
  a->client_address = "[2001:db8::1]:40000";
  auto b = std::make_unique<FakeStream>();
  b->start_time_us = kSecond;
  b->client_address = "[2001:db8::1]:40001";  // same host, another connection
  EXPECT_EQ(h.requestHeaders(*a), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(h.requestHeaders(*b), SLUICE_FILTER_STOP);
}

}  // namespace
