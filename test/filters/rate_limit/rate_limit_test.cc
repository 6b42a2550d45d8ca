// rate_limit unit tests: the plugin driven through its own C hook table over the fake host.
// Rates are per hour so that nothing refills while a test runs on a loaded machine.
#include "filters/rate_limit/rate_limit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters::rate_limit {
namespace {

using testing::FakeStream;
using testing::FilterHarness;

// Sends one request from `client` through `h`; true when it went on (not answered 429).
bool pass(FilterHarness& h, const std::string& client = "10.0.0.1:5000",
          testing::Headers headers = {}) {
  FakeStream s("GET", "/", std::move(headers));
  s.client_address = client;
  sluice_filter_status st = h.requestHeaders(s);
  if (st == SLUICE_FILTER_STOP) {
    EXPECT_TRUE(s.local_reply.has_value());
    EXPECT_EQ(s.local_reply->status, 429u);
    return false;
  }
  EXPECT_EQ(st, SLUICE_FILTER_CONTINUE);
  return true;
}

int admittedOf(FilterHarness& h, int n, const std::string& client = "10.0.0.1:5000",
               const testing::Headers& headers = {}) {
  int ok = 0;
  for (int i = 0; i < n; ++i) ok += pass(h, client, headers) ? 1 : 0;
  return ok;
}

TEST(RateLimitTest, AnswersTooManyRequestsWithHeadersAfterTheBurst) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nper: hour\nburst: 2\npolicy: t1\n");
  ASSERT_TRUE(h.configured()) << h.error();
  EXPECT_TRUE(pass(h));
  EXPECT_TRUE(pass(h));
  FakeStream s;
  s.client_address = "10.0.0.1:6000";  // another port of the same client
  ASSERT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP);
  ASSERT_TRUE(s.local_reply.has_value());
  EXPECT_EQ(s.local_reply->status, 429u);
  EXPECT_EQ(
      s.local_reply->body,
      "{\"status\":429,\"error\":\"Too Many Requests\",\"detail\":\"rate limit exceeded\"}\n");
  EXPECT_EQ(s.local_reply->content_type, "application/json");
  // One token per 3600 s: the next one comes in (just under) an hour, full after two.
  EXPECT_EQ(s.replyHeader("Retry-After"), "3600");
  EXPECT_EQ(s.replyHeader("RateLimit-Policy"), "\"t1\";q=1;w=3600");
  EXPECT_EQ(s.replyHeader("RateLimit"), "\"t1\";r=0;t=7200");
}

TEST(RateLimitTest, ClientsHaveTheirOwnBuckets) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nper: hour\nburst: 3\npolicy: t2\n");
  EXPECT_EQ(admittedOf(h, 5, "10.0.0.1:1"), 3);
  EXPECT_EQ(admittedOf(h, 5, "10.0.0.2:1"), 3);
  // IPv6: brackets and port dropped, spellings of one address share a bucket.
  EXPECT_EQ(admittedOf(h, 2, "[2001:db8::1]:1"), 2);
  EXPECT_EQ(admittedOf(h, 2, "[2001:0db8:0:0::1]:2"), 1);
  EXPECT_EQ(admittedOf(h, 2, "[2001:db8::2]:1"), 2);
  // An IPv4-mapped address is the IPv4 client.
  EXPECT_EQ(admittedOf(h, 1, "[::ffff:10.0.0.2]:9"), 0);
}

// A worker keeps the last key's fingerprint: keys taking turns must still each get their own
// bucket (a stale fingerprint would charge the other key's).
TEST(RateLimitTest, KeysTakingTurnsKeepTheirOwnBuckets) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nper: hour\nburst: 2\npolicy: t9\n");
  ASSERT_TRUE(h.configured()) << h.error();
  EXPECT_TRUE(pass(h, "10.0.0.1:1"));
  EXPECT_TRUE(pass(h, "10.0.0.2:1"));
  EXPECT_TRUE(pass(h, "10.0.0.1:1"));
  EXPECT_TRUE(pass(h, "10.0.0.3:1"));
  EXPECT_FALSE(pass(h, "10.0.0.1:1"));  // its third, after two other keys
  EXPECT_TRUE(pass(h, "10.0.0.2:1"));
  EXPECT_FALSE(pass(h, "10.0.0.2:1"));
  EXPECT_TRUE(pass(h, "10.0.0.3:1"));
}

TEST(RateLimitTest, Ipv6PrefixGroupsANetwork) {
  FilterHarness h(sluice_plugin_entry(),
                  "rate: 1\nper: hour\nburst: 2\nipv6_prefix: 64\npolicy: t3\n");
  EXPECT_EQ(admittedOf(h, 1, "[2001:db8:1:2::1]:1"), 1);
  EXPECT_EQ(admittedOf(h, 2, "[2001:db8:1:2:ffff::9]:1"), 1);  // same /64
  EXPECT_EQ(admittedOf(h, 1, "[2001:db8:1:3::1]:1"), 1);       // next /64
  EXPECT_EQ(admittedOf(h, 3, "192.0.2.1:1"), 2);               // IPv4 unaffected
}

TEST(RateLimitTest, ClientIpParsing) {
  EXPECT_EQ(clientIp("192.0.2.7:443", 128), "192.0.2.7");
  EXPECT_EQ(clientIp("192.0.2.7", 128), "192.0.2.7");
  EXPECT_EQ(clientIp("[::1]:80", 128), "::1");
  EXPECT_EQ(clientIp("::1", 128), "::1");
  EXPECT_EQ(clientIp("[2001:DB8:0::AB]:1", 128), "2001:db8::ab");
  EXPECT_EQ(clientIp("[::ffff:192.0.2.9]:1", 64), "192.0.2.9");
  EXPECT_EQ(clientIp("[2001:db8:aaaa:bbbb:cccc::1]:1", 48), "2001:db8:aaaa::/48");
  EXPECT_EQ(clientIp("[2001:db8::1]:1", 1), "::/1");
}

TEST(RateLimitTest, HeaderKeyAndMissingKeyModes) {
  const std::string base = "rate: 1\nper: hour\nburst: 2\nkey: {header: X-Tenant}\n";
  {
    FilterHarness h(sluice_plugin_entry(), base + "policy: m1\n");  // default: shared
    ASSERT_TRUE(h.configured()) << h.error();
    EXPECT_EQ(admittedOf(h, 3, "10.0.0.1:1", {{"x-tenant", "acme"}}), 2);
    EXPECT_EQ(admittedOf(h, 3, "10.0.0.1:1", {{"X-Tenant", "globex"}}), 2);
    // No header (or an empty one): one bucket for all of them, whatever the client.
    EXPECT_EQ(admittedOf(h, 1, "10.0.0.1:1"), 1);
    EXPECT_EQ(admittedOf(h, 1, "10.0.0.2:1", {{"X-Tenant", ""}}), 1);
    EXPECT_EQ(admittedOf(h, 1, "10.0.0.3:1"), 0);
  }
  {
    FilterHarness h(sluice_plugin_entry(), base + "missing_key: allow\npolicy: m2\n");
    EXPECT_EQ(admittedOf(h, 5), 5);
    EXPECT_EQ(admittedOf(h, 3, "10.0.0.1:1", {{"X-Tenant", "acme"}}), 2);
  }
  {
    FilterHarness h(sluice_plugin_entry(), base + "missing_key: deny\npolicy: m3\n");
    FakeStream s;
    ASSERT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP);
    EXPECT_EQ(s.local_reply->status, 429u);
    EXPECT_EQ(
        s.local_reply->body,
        "{\"status\":429,\"error\":\"Too Many Requests\",\"detail\":\"rate limit key missing\"}\n");
    EXPECT_FALSE(s.replyHeader("Retry-After").has_value());  // waiting would not help
    EXPECT_EQ(admittedOf(h, 1, "10.0.0.1:1", {{"X-Tenant", "acme"}}), 1);
  }
}

TEST(RateLimitTest, ConsumerRouteAndCombinedKeys) {
  FilterHarness h(sluice_plugin_entry(),
                  "rate: 1\nper: hour\nburst: 1\nkey: [consumer, route]\nmissing_key: deny\n"
                  "policy: c1\n");
  ASSERT_TRUE(h.configured()) << h.error();
  auto send = [&](const char* consumer, const char* route) {
    FakeStream s;
    if (consumer != nullptr) s.context["consumer"] = consumer;
    if (route != nullptr) s.attributes[SLUICE_ATTR_ROUTE_NAME] = route;
    return h.requestHeaders(s) == SLUICE_FILTER_CONTINUE;
  };
  EXPECT_TRUE(send("alice", "orders"));
  EXPECT_FALSE(send("alice", "orders"));
  EXPECT_TRUE(send("alice", "users"));
  EXPECT_TRUE(send("bob", "orders"));
  EXPECT_FALSE(send("bob", "orders"));
  EXPECT_FALSE(send(nullptr, "orders"));  // no consumer: deny
  EXPECT_FALSE(send("carol", nullptr));   // no route name: deny
  // A key missing a part leaves the last whole key's bucket as it was.
  EXPECT_FALSE(send("bob", "orders"));
  EXPECT_TRUE(send("carol", "orders"));
  // Length-prefixed parts: ("ab", "c") and ("a", "bc") are different keys.
  EXPECT_TRUE(send("ab", "c"));
  EXPECT_TRUE(send("a", "bc"));
  EXPECT_FALSE(send("ab", "c"));
  EXPECT_FALSE(send("alice", "users"));
}

TEST(RateLimitTest, HeadersOnSuccess) {
  FilterHarness h(sluice_plugin_entry(),
                  "rate: 100\nper: minute\nburst: 3\nheaders_on_success: true\npolicy: s1\n");
  FakeStream s;
  ASSERT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  s.response_status = 200;
  h.responseHeaders(s);
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "RateLimit-Policy"),
            std::vector<std::string>{"\"s1\";q=100;w=60"});
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "RateLimit"),
            std::vector<std::string>{"\"s1\";r=2;t=1"});  // 0.6 s to refill one token
  FilterHarness quiet(sluice_plugin_entry(), "rate: 100\nper: minute\npolicy: s2\n");
  FakeStream q;
  quiet.requestHeaders(q);
  quiet.responseHeaders(q);
  EXPECT_TRUE(q.values(SLUICE_HEADERS_RESPONSE, "RateLimit").empty());
}

// ABI 1.3: without headers_on_success the response hook does nothing, so the config instance
// tells the host to leave it out; with it, every hook is kept.
TEST(RateLimitTest, ResponseHookUnusedWithoutHeadersOnSuccess) {
  const auto* hooks = static_cast<const sluice_filter_plugin*>(sluice_plugin_entry()->hooks);
  ASSERT_NE(hooks->unused_hooks, nullptr);
  FilterHarness loud(sluice_plugin_entry(), "rate: 100\nper: minute\nheaders_on_success: true\n");
  ASSERT_TRUE(loud.configured()) << loud.error();
  EXPECT_EQ(hooks->unused_hooks(loud.config()), 0u);
  FilterHarness quiet(sluice_plugin_entry(), "rate: 100\nper: minute\n");
  ASSERT_TRUE(quiet.configured()) << quiet.error();
  EXPECT_EQ(hooks->unused_hooks(quiet.config()), SLUICE_HOOK_RESPONSE_HEADERS);
}

TEST(RateLimitTest, PolicyWindowForFractionalRates) {
  struct Case {
    const char* yaml;
    const char* policy;
  };
  for (const Case& c : {
           Case{"rate: 0.5\n", "\"default\";q=1;w=2"}, Case{"rate: 2.5\n", "\"default\";q=5;w=2"},
           Case{"rate: 1000\n", "\"default\";q=1000;w=1"},
           Case{"rate: 10\nper: hour\n", "\"default\";q=10;w=3600"},
           Case{"rate: 0.3333\n", "\"default\";q=1;w=3"},
           Case{"rate: 1.5\nper: minute\n", "\"default\";q=3;w=120"},
           Case{"rate: 100.4\n", "\"default\";q=201;w=2"},  // within 0.1%
       }) {
    FilterHarness h(sluice_plugin_entry(), std::string(c.yaml) + "headers_on_success: true\n");
    ASSERT_TRUE(h.configured()) << h.error();
    FakeStream a;
    ASSERT_EQ(h.requestHeaders(a), SLUICE_FILTER_CONTINUE) << c.yaml;
    h.responseHeaders(a);
    EXPECT_EQ(a.values(SLUICE_HEADERS_RESPONSE, "RateLimit-Policy"),
              std::vector<std::string>{c.policy})
        << c.yaml;
  }
}

// A reload builds the new config instance while the old one is alive: the same entry keeps
// its buckets; a changed rate or policy starts fresh.
TEST(RateLimitTest, BucketsSurviveANewConfigInstanceWithTheSameParameters) {
  const std::string yaml = "rate: 1\nper: hour\nburst: 2\npolicy: r1\n";
  auto old_instance = std::make_unique<FilterHarness>(sluice_plugin_entry(), yaml);
  EXPECT_EQ(admittedOf(*old_instance, 2), 2);
  FilterHarness reloaded(sluice_plugin_entry(), yaml);
  old_instance.reset();  // the old snapshot is released after the swap
  EXPECT_EQ(admittedOf(reloaded, 1), 0);
  FilterHarness changed(sluice_plugin_entry(), "rate: 2\nper: hour\nburst: 2\npolicy: r1\n");
  EXPECT_EQ(admittedOf(changed, 3), 2);
  FilterHarness renamed(sluice_plugin_entry(), "rate: 1\nper: hour\nburst: 2\npolicy: r2\n");
  EXPECT_EQ(admittedOf(renamed, 3), 2);
}

// Two workers (threads) of one config instance spend the same buckets: the limit is the
// process's, not each worker's.
TEST(RateLimitTest, WorkersShareTheBuckets) {
  FilterHarness h(sluice_plugin_entry(), "rate: 1\nper: hour\nburst: 500\npolicy: w1\n");
  ASSERT_TRUE(h.configured());
  const sluice_filter_plugin& hooks = h.hooks();
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      void* worker = hooks.worker_create(h.config(), w);
      for (int i = 0; i < 2000; ++i) {
        FakeStream s;
        s.client_address = "10.0.0." + std::to_string(1 + i % 2) + ":1000";
        s.worker_index = w;
        void* self = hooks.stream_create(worker, s.handle());
        if (hooks.on_request_headers(self, s.handle(), 1) == SLUICE_FILTER_CONTINUE) admitted++;
        hooks.stream_destroy(self);
      }
      hooks.worker_destroy(worker);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(admitted.load(), 1000);  // 500 for each of the two clients, whichever worker
}

TEST(RateLimitTest, RefusesBadConfigsWithLineAndColumn) {
  struct Case {
    const char* yaml;
    const char* message;
    uint32_t line;
  };
  for (const Case& c : {
           Case{"burst: 3\n", "'rate' is required (tokens per second, minute or hour)", 0},
           Case{"rate: 0\n", "expected a number > 0", 1},
           Case{"rate: -1\n", "expected a number > 0", 1},
           Case{"rate: fast\n", "expected a number", 1},
           Case{"rate: 5\nper: day\n", "expected second, minute or hour", 2},
           Case{"rate: 5\nburst: 0\n", "expected an integer from 1 to 1000000000", 2},
           Case{"rate: 5\nkey: ip\n",
                "expected client_ip, consumer, route, cluster, listener or {header: NAME}", 2},
           Case{"rate: 5\nkey: {header: 'X Y'}\n", "'X Y' is not a header name", 2},
           Case{"rate: 5\nkey: []\n", "expected at least one key part", 2},
           Case{"rate: 5\nmissing_key: ignore\n", "expected shared, allow or deny", 2},
           Case{"rate: 5\nmax_keys: 0\n", "expected an integer from 1 to 10000000", 2},
           Case{"rate: 5\npolicy: 'a b'\n", "expected 1..64 characters of A-Z a-z 0-9 _ . -", 2},
           Case{"rate: 5\nrequests_per_second: 5\n",
                "unknown key 'requests_per_second' (expected one of: rate, per, burst, key, "
                "missing_key, max_keys, ipv6_prefix, policy, headers_on_success)",
                2},
           Case{"rate: 2000000000\n", "at most 1e9 tokens per second", 1},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error(), c.message) << c.yaml;
    if (c.line != 0) {
      EXPECT_EQ(h.errorLine(), c.line) << c.yaml;
    }
  }
  // A key header over the 256 bytes the host's header_name interns would never be found
  // (missing_key for every request): refused at load.
  EXPECT_TRUE(FilterHarness(sluice_plugin_entry(),
                            "rate: 5\nkey: {header: X" + std::string(255, 'a') + "}\n")
                  .configured());
  FilterHarness longer(sluice_plugin_entry(),
                       "rate: 5\nkey: {header: X" + std::string(256, 'a') + "}\n");
  EXPECT_FALSE(longer.configured());
  EXPECT_EQ(longer.error(), "'X" + std::string(63, 'a') + "...' is longer than 256 bytes");
}

}  // namespace
}  // namespace sluice::filters::rate_limit
