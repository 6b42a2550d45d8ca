// Retries against real failing upstreams (scripted TCP servers in this process): a reset
// before any response byte is retried for GET but not for a POST whose body was sent; retry_on
// 503 moves the request to another host and the discarded 503 never reaches the client; the
// retry budget bounds what every-503 upstreams see; a per-try timeout is retried elsewhere;
// backoff spaces the tries; the last 503 goes to the client when retries run out.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "test/integration/gateway.h"
#include "test/integration/resilience_util.h"
#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

using Reply = ScriptedUpstream::Reply;

std::string methodOf(const std::string& head) { return head.substr(0, head.find(' ')); }

int countMethod(const ScriptedUpstream& up, const std::string& method) {
  int n = 0;
  for (const std::string& h : up.requests()) n += methodOf(h) == method ? 1 : 0;
  return n;
}

std::string status503(const std::string& body = "busy") {
  return "HTTP/1.1 503 Service Unavailable\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// Two hosts, `bad` first; a cluster `up` with the given extra YAML lines.
std::string twoHostConfig(const std::string& cluster_extra) {
  return R"(
workers: 1
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: up
    endpoints: [${A}, ${B}]
)" + cluster_extra;
}

TEST(RetryTest, ResetBeforeResponseIsRetriedForGetButNotForPostAfterSend) {
  // A reads each request whole, then closes without a byte of response; B answers.
  ScriptedUpstream bad([](const std::string&, int) { return Reply{"", true}; });
  ScriptedUpstream good([](const std::string&, int) { return Reply{okResponse("good")}; });
  Gateway gw(
      twoHostConfig("    retry_policy: {retries: 1, backoff_base_ms: 1, backoff_max_ms: 2}\n"),
      {{"A", bad.address()}, {"B", good.address()}});
  ASSERT_TRUE(gw.ready());
  for (int i = 0; i < 6; ++i) {
    Response r = httpGet(gw.port(), "/gateway/up/get" + std::to_string(i));
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, "good");
  }
  EXPECT_GT(countMethod(bad, "GET"), 0);  // round robin sent some there first
  EXPECT_EQ(countMethod(good, "GET"), 6);
  int posts_502 = 0;
  int posts_200 = 0;
  for (int i = 0; i < 6; ++i) {
    Response r = httpRequest(gw.port(), "POST", "/gateway/up/post", {}, "payload");
    if (r.status == 502) ++posts_502;
    if (r.status == 200) ++posts_200;
  }
  EXPECT_EQ(posts_502 + posts_200, 6);
  // Every POST that reached A was answered 502 and never sent again.
  EXPECT_GT(posts_502, 0);
  EXPECT_EQ(countMethod(bad, "POST"), posts_502);
  EXPECT_EQ(countMethod(good, "POST"), posts_200);
  std::string s = scrapeMetrics(gw.adminPort());
  EXPECT_GE(
      metricValue(s, R"(sluice_upstream_retries_by_reason_total{cluster="up",reason="reset"})"), 1);
}

TEST(RetryTest, Retry503GoesToAnotherHostAndTheDiscarded503NeverReachesTheClient) {
  ScriptedUpstream bad([](const std::string&, int) { return Reply{status503("from-a")}; });
  ScriptedUpstream good([](const std::string&, int) { return Reply{okResponse("from-b")}; });
  Gateway gw(twoHostConfig("    retry_policy: {retries: 1, retry_on: [503], backoff_base_ms: 1, "
                           "backoff_max_ms: 2}\n"),
             {{"A", bad.address()}, {"B", good.address()}});
  ASSERT_TRUE(gw.ready());
  for (int i = 0; i < 8; ++i) {
    Response r = httpGet(gw.port(), "/gateway/up/x");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "from-b");
  }
  EXPECT_GT(countMethod(bad, "GET"), 0);
  EXPECT_EQ(countMethod(good, "GET"), 8);
  // A POST is not idempotent: its 503 passes through.
  int post_503 = 0;
  for (int i = 0; i < 4; ++i) {
    Response r = httpRequest(gw.port(), "POST", "/gateway/up/p", {}, "b");
    if (r.status == 503) {
      ++post_503;
      EXPECT_EQ(r.body, "from-a");
    }
  }
  EXPECT_EQ(post_503, countMethod(bad, "POST"));
  EXPECT_GE(metric(gw.adminPort(),
                   R"(sluice_upstream_retries_by_reason_total{cluster="up",reason="503"})"),
            1);
}

TEST(RetryTest, BackoffSpacesTheTriesAndTheLast503GoesToTheClient) {
  std::mutex mu;
  std::vector<int64_t> at;
  ScriptedUpstream only([&](const std::string&, int i) {
    std::lock_guard<std::mutex> lock(mu);
    at.push_back(nowMs());
    return Reply{status503("try" + std::to_string(i))};
  });
  Gateway gw(R"(
workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: up
    endpoints: [${A}]
    retry_policy: {retries: 3, retry_on: [503], backoff_base_ms: 200, backoff_max_ms: 400}
)",
             {{"A", only.address()}});
  ASSERT_TRUE(gw.ready());
  Response r = httpGet(gw.port(), "/gateway/up/x");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "try3");  // the last try's own response
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(at.size(), 4u);
  // Equal jitter: each wait is at least half its interval (200, 400, 400 ms).
  EXPECT_GE(at[1] - at[0], 95);
  EXPECT_GE(at[2] - at[1], 195);
  EXPECT_GE(at[3] - at[2], 195);
}

TEST(RetryTest, BudgetBoundsWhatEvery503UpstreamSees) {
  std::atomic<int> seen{0};
  auto handler = [&](const std::string&, int) {
    ++seen;
    return Reply{status503()};
  };
  ScriptedUpstream a(handler);
  ScriptedUpstream b(handler);
  ScriptedUpstream c(handler);
  Gateway gw(R"(
workers: 2
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: up
    endpoints: [${A}, ${B}, ${C}]
    retry_policy: {retries: 3, retry_on: [503], backoff_base_ms: 10, backoff_max_ms: 40,
                   budget_percent: 20, min_retry_concurrency: 1}
)",
             {{"A", a.address()}, {"B", b.address()}, {"C", c.address()}});
  ASSERT_TRUE(gw.ready());
  constexpr int kClients = 20;
  constexpr int kEach = 15;
  std::atomic<int> got503{0};
  std::mutex others_mu;
  std::string others;  // what the requests that did not get their 503 got instead
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        Response r = httpGet(gw.port(), "/gateway/up/x");
        if (r.status == 503) {
          ++got503;
          continue;
        }
        std::lock_guard<std::mutex> lock(others_mu);
        others += " [" + std::to_string(r.status) + " " + r.error + "]";
      }
    });
  }
  for (auto& t : clients) t.join();
  const int requests = kClients * kEach;
  EXPECT_EQ(got503.load(), requests) << "others:" << others;
  // Without the budget each request would make 4 tries (4 x requests). With it, retries in
  // flight stay under 20% of the requests in flight (or 1).
  // (+3: the budget is checked when a retry is due, by two workers at once.)
  EXPECT_LE(seen.load(), requests * 12 / 10 + 3) << "upstream saw " << seen.load();
  EXPECT_GT(seen.load(), requests);  // some retries did happen
  std::string s = scrapeMetrics(gw.adminPort());
  EXPECT_GT(metricValue(s, R"(sluice_upstream_retry_budget_exhausted_total{cluster="up"})"), 0);
  EXPECT_EQ(metricValue(s, R"(sluice_upstream_retries_active{cluster="up"})"), 0);
  std::cout << "budget: " << requests << " requests, upstreams saw " << seen.load() << "\n";
}

TEST(RetryTest, PerTryTimeoutIsRetriedOnAnotherHost) {
  // A accepts and reads but answers only after 3 s (hung); B answers at once.
  ScriptedUpstream hung([](const std::string&, int) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return Reply{okResponse("late")};
  });
  ScriptedUpstream good([](const std::string&, int) { return Reply{okResponse("from-b")}; });
  Gateway gw(twoHostConfig("    response_timeout_ms: 300\n"
                           "    retry_policy: {retries: 1, retry_on: [per_try_timeout]}\n"),
             {{"A", hung.address()}, {"B", good.address()}});
  ASSERT_TRUE(gw.ready());
  for (int i = 0; i < 4; ++i) {
    int64_t t0 = nowMs();
    Response r = httpGet(gw.port(), "/gateway/up/x");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "from-b");
    EXPECT_LT(nowMs() - t0, 2900);  // not waiting for the hung host
  }
  EXPECT_GT(static_cast<int>(hung.requests().size()), 0);
  EXPECT_GE(metric(gw.adminPort(),
                   R"(sluice_upstream_timeouts_by_kind_total{cluster="up",kind="per_try"})"),
            1);
}

TEST(RetryTest, IdempotentRequestIsResentWithItsBodyOnlyWhileTheBodyIsHeld) {
  ScriptedUpstream bad([](const std::string&, int) { return Reply{"", true}; });
  EchoBackend good("good");
  Gateway gw(twoHostConfig("    retry_policy: {retries: 1, backoff_base_ms: 1, backoff_max_ms: 2,\n"
                           "                   max_body_bytes: 4096}\n"),
             {{"A", bad.address()}, {"B", good.address()}});
  ASSERT_TRUE(gw.ready());
  const std::string small(1000, 's');
  for (int i = 0; i < 4; ++i) {
    Response r = httpRequest(gw.port(), "PUT", "/gateway/up/upload", {}, small);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(echoNumber(r.body, "body_length"), 1000);
    EXPECT_EQ(echoString(r.body, "body_fnv1a"), hex8(fnv1a(small)));
  }
  EXPECT_GT(countMethod(bad, "PUT"), 0);
  // Over max_body_bytes the body is not kept: a reset after sending is not retried.
  const std::string big(100000, 'b');
  const int bad_before = countMethod(bad, "PUT");
  int failed = 0;
  for (int i = 0; i < 4; ++i) {
    Response r = httpRequest(gw.port(), "PUT", "/gateway/up/upload", {}, big);
    if (r.status == 502) ++failed;
    if (r.status == 200) {
      EXPECT_EQ(echoNumber(r.body, "body_length"), 100000);
    }
  }
  EXPECT_GT(failed, 0);
  EXPECT_EQ(countMethod(bad, "PUT") - bad_before, failed);
}

TEST(RetryTest, ConnectFailureRetriesAnyMethodWithItsBody) {
  DeadPort dead;
  ScriptedUpstream good([](const std::string& head, int) {
    return Reply{okResponse(head.substr(0, head.find(' ')))};
  });
  Gateway gw(twoHostConfig("    retry_policy: {retries: 1}\n"),
             {{"A", dead.address()}, {"B", good.address()}});
  ASSERT_TRUE(gw.ready());
  for (int i = 0; i < 4; ++i) {
    Response r = httpRequest(gw.port(), "POST", "/gateway/up/x", {}, "body-bytes");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "POST");
  }
}

}  // namespace
}  // namespace sluice::test
