// concurrency_limit through the real binary, in front of a scripted upstream that holds
// requests: with `max: 2`, a third request in flight gets 503 with Retry-After, and both slots
// come back whichever way the held requests end — completion, client abort, upstream error,
// response timeout. Two workers: the count is the process's.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
admin: {address: 127.0.0.1:${ADMIN}}
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
      - name: concurrency_limit
        config: {max: 2, per: listener, retry_after: 2}
routes:
  # The route's own entry replaces the listener's in place (per-route config): one at a time
  # per route on this route, not counted against the listener's two.
  - name: single
    prefix: /single/
    cluster: slow
    filters:
      - name: concurrency_limit
        config: {max: 1, per: route, retry_after: 5}
clusters:
  - name: slow
    retries: 0
    response_timeout_ms: 30000
    endpoints: [${UP}]
  - name: timed
    retries: 0
    response_timeout_ms: 1000
    endpoints: [${UP}]
)";

// What the upstream's handlers wait on. Shared with them (they may outlive a test).
struct Holds {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;     // held requests that reached the upstream
  int generation = 0;  // release() ends the holds that arrived before it
  bool stop = false;   // teardown: end every hold

  void release() {
    std::lock_guard<std::mutex> lock(mu);
    ++generation;
    cv.notify_all();
  }
  // Waits until `n` held requests arrived in total; false after 15 s.
  bool waitArrived(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(15), [&] { return arrived >= n; });
  }
};

class ConcurrencyLimitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    holds_ = std::make_shared<Holds>();
    std::shared_ptr<Holds> holds = holds_;
    upstream_ = std::make_unique<ScriptedUpstream>([holds](const std::string& head, int) {
      const bool ok = head.find("/hold/ok") != std::string::npos;
      const bool err = head.find("/hold/err") != std::string::npos;
      const bool forever = head.find("/hold/forever") != std::string::npos;
      if (!ok && !err && !forever) return ScriptedUpstream::Reply{okResponse("fast")};
      std::unique_lock<std::mutex> lock(holds->mu);
      const int generation = holds->generation;
      ++holds->arrived;
      holds->cv.notify_all();
      holds->cv.wait(lock,
                     [&] { return holds->stop || (!forever && holds->generation > generation); });
      // A malformed response, then a close: 502. (A close with no byte at all on a reused
      // connection would be resent once as a stale pooled connection.)
      if (err) return ScriptedUpstream::Reply{"HTTP/1.1 abc\r\n\r\n", true};
      return ScriptedUpstream::Reply{okResponse("held")};
    });
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"UP", upstream_->address()}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    {
      std::lock_guard<std::mutex> lock(holds_->mu);
      holds_->stop = true;
      holds_->cv.notify_all();
    }
    upstream_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static int port() { return gateway_->port(); }

  // Starts two requests for `path`, each on its own connection, and waits until the upstream
  // holds both: the limit is reached.
  static std::vector<std::unique_ptr<RawConnection>> fill(const std::string& path) {
    std::vector<std::unique_ptr<RawConnection>> conns;
    int before = 0;
    {
      std::lock_guard<std::mutex> lock(holds_->mu);
      before = holds_->arrived;
    }
    for (int i = 0; i < 2; ++i) {
      conns.push_back(std::make_unique<RawConnection>(port(), 30000));
      EXPECT_TRUE(conns.back()->send(buildRequest("GET", path, {}, "", port())));
    }
    EXPECT_TRUE(holds_->waitArrived(before + 2)) << "the upstream did not get both " << path;
    return conns;
  }

  // A third request now is refused.
  static void expectRefused() {
    Response r = httpGet(port(), "/gateway/slow/fast");
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.header("Retry-After"), "2");
    EXPECT_TRUE(isJsonError(r, 503)) << r.body;
    EXPECT_NE(r.body.find("concurrency limit reached"), std::string::npos) << r.body;
  }

  // The plugin's in-flight gauge for entries of `per` from the admin /stats/prometheus (-1 when
  // absent).
  static int64_t inFlight(const std::string& per = "listener") {
    Response r = httpGet(gateway_->adminPort(), "/stats/prometheus");
    const std::string name = "sluice_plugin_concurrency_limit_in_flight{per=\"" + per + "\"} ";
    size_t at = r.body.find("\n" + name);
    if (at == std::string::npos) return -1;
    return std::atoll(r.body.c_str() + at + 1 + name.size());
  }
  // Polls until no request holds a slot of `per` entries (a slot is given back when its stream
  // ends, just after the response went out, maybe on the other worker).
  static void expectDrained(const std::string& per = "listener") {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    int64_t n = inFlight(per);
    while (n != 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      n = inFlight(per);
    }
    ASSERT_EQ(n, 0) << "slots not given back (" << per << ")";
  }
  // Both slots are free again, and no more than two (the count did not go below zero).
  static void expectBothSlotsBack() {
    expectDrained();
    auto conns = fill("/gateway/slow/hold/ok");
    expectRefused();
    holds_->release();
    for (auto& c : conns) EXPECT_EQ(c->readResponse().status, 200);
    expectDrained();
  }

  static inline std::shared_ptr<Holds> holds_;
  static inline std::unique_ptr<ScriptedUpstream> upstream_;
  static inline std::unique_ptr<Gateway> gateway_;
};

TEST_F(ConcurrencyLimitTest, SlotsComeBackWhenRequestsComplete) {
  auto conns = fill("/gateway/slow/hold/ok");
  EXPECT_EQ(inFlight(), 2);
  expectRefused();
  holds_->release();
  for (auto& c : conns) {
    Response r = c->readResponse();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "held");
  }
  expectBothSlotsBack();
}

TEST_F(ConcurrencyLimitTest, SlotsComeBackWhenTheClientAborts) {
  auto conns = fill("/gateway/slow/hold/forever");
  expectRefused();
  // The clients go away mid-request with an abortive close (RST, as a killed client does; a
  // plain FIN after a complete request is a half-close that still waits for its response).
  for (auto& c : conns) {
    linger l{1, 0};
    setsockopt(c->fd(), SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  }
  conns.clear();  // the upstream still holds both
  expectBothSlotsBack();
}

TEST_F(ConcurrencyLimitTest, SlotsComeBackAfterAnUpstreamError) {
  auto conns = fill("/gateway/slow/hold/err");
  expectRefused();
  holds_->release();  // the upstream answers both with garbage
  for (auto& c : conns) EXPECT_EQ(c->readResponse().status, 502);
  expectBothSlotsBack();
}

TEST_F(ConcurrencyLimitTest, SlotsComeBackAfterAResponseTimeout) {
  auto conns = fill("/gateway/timed/hold/forever");
  expectRefused();
  for (auto& c : conns) EXPECT_EQ(c->readResponse().status, 504);  // after 1 s
  expectBothSlotsBack();
}

TEST_F(ConcurrencyLimitTest, ARouteEntryCountsPerRouteWithItsOwnMax) {
  int before = 0;
  {
    std::lock_guard<std::mutex> lock(holds_->mu);
    before = holds_->arrived;
  }
  RawConnection held(port(), 30000);
  ASSERT_TRUE(held.send(buildRequest("GET", "/gateway/single/hold/ok", {}, "", port())));
  ASSERT_TRUE(holds_->waitArrived(before + 1));
  Response second = httpGet(port(), "/gateway/single/fast");
  EXPECT_EQ(second.status, 503);
  EXPECT_EQ(second.header("Retry-After"), "5");
  // The listener's entry (other paths) has both of its slots.
  auto conns = fill("/gateway/slow/hold/ok");
  expectRefused();
  holds_->release();
  EXPECT_EQ(held.readResponse().status, 200);
  for (auto& c : conns) EXPECT_EQ(c->readResponse().status, 200);
  expectDrained();
  expectDrained("route");
  EXPECT_EQ(httpGet(port(), "/gateway/single/fast").status, 200);
}

}  // namespace
}  // namespace sluice::test
