// rate_limit through the real binary: 429 with Retry-After and RateLimit headers once a key's
// burst is spent, keys kept apart, and one limit for the whole process with two workers.
// Rates are per hour, so nothing refills while a test runs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
      - name: rate_limit
        config:
          rate: 1
          per: hour
          burst: 3
          key: {header: X-Tenant}
          missing_key: deny
          policy: tenant
          headers_on_success: true
  - name: by_ip
    address: 127.0.0.1:${PORT2}
    context_path: /gateway
    filters:
      - name: rate_limit
        config: {rate: 1, per: hour, burst: 40, policy: ip}
  - name: by_consumer
    address: 127.0.0.1:${PORT3}
    context_path: /gateway
    filters:
      - {name: probe, path: '${PROBE}'}
      - name: rate_limit
        config: {rate: 1, per: hour, burst: 2, key: [consumer, cluster], missing_key: deny,
                 policy: consumer}
routes:
  # Per-route config: this route's entry replaces the listener's rate_limit in place.
  - name: strict
    prefix: /strict/
    cluster: echo
    filters:
      - name: rate_limit
        config: {rate: 1, per: hour, burst: 1, key: route, policy: strict}
clusters:
  - name: other
    endpoints: [${BACKEND}]
  - name: echo
    endpoints: [${BACKEND}]
)";

// `value` is a whole number of seconds in (expected - 60, expected].
bool near(const std::string& value, long expected) {
  char* end = nullptr;
  long v = std::strtol(value.c_str(), &end, 10);
  return !value.empty() && *end == '\0' && v <= expected && v > expected - 60;
}

// `value` is `"tenant";r=<remaining>;t=<about reset>`.
bool limitIs(const std::string& value, int remaining, long reset) {
  const std::string prefix = "\"tenant\";r=" + std::to_string(remaining) + ";t=";
  return value.rfind(prefix, 0) == 0 && near(value.substr(prefix.size()), reset);
}

class RateLimitTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    port2_ = freePort();
    port3_ = freePort();
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{
                     {"BACKEND", backend_->address()},
                     {"PORT2", std::to_string(port2_)},
                     {"PORT3", std::to_string(port3_)},
                     {"PROBE", runfile("test/integration/fixtures/libprobe.so")}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static Response asTenant(const std::string& tenant) {
    return httpGet(gateway_->port(), "/gateway/echo/x", {{"X-Tenant", tenant}});
  }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline int port2_ = 0;
  static inline int port3_ = 0;
};

TEST_F(RateLimitTest, TooManyRequestsWithHeadersAfterTheBurst) {
  for (int i = 0; i < 3; ++i) {
    Response r = asTenant("acme");
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 200) << i;
    EXPECT_EQ(r.header("RateLimit-Policy"), "\"tenant\";q=1;w=3600");
    // Full again (t) i+1 hours after the first request; a loaded machine may take seconds.
    EXPECT_TRUE(limitIs(r.header("RateLimit"), 2 - i, 3600 * (i + 1))) << r.header("RateLimit");
  }
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.send(
      buildRequest("GET", "/gateway/echo/x", {{"X-Tenant", "acme"}}, "", gateway_->port())));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 429);
  EXPECT_TRUE(isJsonError(r, 429)) << r.body;
  EXPECT_EQ(
      r.body,
      "{\"status\":429,\"error\":\"Too Many Requests\",\"detail\":\"rate limit exceeded\"}\n");
  EXPECT_TRUE(near(r.header("Retry-After"), 3600)) << r.header("Retry-After");
  EXPECT_EQ(r.header("RateLimit-Policy"), "\"tenant\";q=1;w=3600");
  EXPECT_TRUE(limitIs(r.header("RateLimit"), 0, 10800)) << r.header("RateLimit");
  // A 429 does not cost the client its connection (the request was read completely).
  EXPECT_TRUE(r.keep_alive);
  ASSERT_TRUE(conn.send(
      buildRequest("GET", "/gateway/echo/x", {{"X-Tenant", "acme"}}, "", gateway_->port())));
  EXPECT_EQ(conn.readResponse().status, 429);
}

TEST_F(RateLimitTest, KeysAreSeparateAndAMissingKeyIsDenied) {
  for (int i = 0; i < 3; ++i) EXPECT_EQ(asTenant("globex").status, 200);
  EXPECT_EQ(asTenant("globex").status, 429);
  EXPECT_EQ(asTenant("initech").status, 200);  // another tenant: its own bucket
  Response none = httpGet(gateway_->port(), "/gateway/echo/x");
  EXPECT_EQ(none.status, 429);
  EXPECT_TRUE(isJsonError(none, 429)) << none.body;
  EXPECT_NE(none.body.find("rate limit key missing"), std::string::npos) << none.body;
  EXPECT_EQ(none.header("Retry-After"), "");
}

// The consumer an earlier filter (an auth filter; here the probe test filter) put in the
// request context, combined with the cluster.
TEST_F(RateLimitTest, ConsumerFromTheRequestContextAndClusterKey) {
  auto as = [&](const std::string& consumer, const std::string& cluster) {
    Headers h;
    if (!consumer.empty()) h.push_back({"X-Probe-Set-Context", "consumer=" + consumer});
    return httpGet(port3_, "/gateway/" + cluster + "/x", h).status;
  };
  EXPECT_EQ(as("alice", "echo"), 200);
  EXPECT_EQ(as("alice", "echo"), 200);
  EXPECT_EQ(as("alice", "echo"), 429);
  EXPECT_EQ(as("alice", "other"), 200);  // another cluster: another bucket
  EXPECT_EQ(as("bob", "echo"), 200);     // another consumer
  EXPECT_EQ(as("", "echo"), 429);        // no consumer: missing_key deny
}

TEST_F(RateLimitTest, ARouteEntryHasItsOwnConfigAndKeysOnTheRoute) {
  Response first = httpGet(gateway_->port(), "/gateway/strict/a");  // no X-Tenant needed
  EXPECT_EQ(first.status, 200);
  Response second = httpGet(gateway_->port(), "/gateway/strict/b", {{"X-Tenant", "acme2"}});
  EXPECT_EQ(second.status, 429);
  EXPECT_EQ(second.header("RateLimit-Policy"), "\"strict\";q=1;w=3600");
  // The listener's entry still applies elsewhere, with its own buckets.
  EXPECT_EQ(asTenant("acme2").status, 200);
}

// Eight connections at once on a two-worker sluice (SO_REUSEPORT spreads them over both
// workers): one client IP gets its burst of 40 in total, not 40 per worker.
TEST_F(RateLimitTest, TheLimitHoldsForTheProcessAcrossWorkers) {
  std::atomic<int> ok{0}, limited{0}, other{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      auto conn = std::make_unique<RawConnection>(port2_);
      for (int i = 0; i < 10; ++i) {
        if (!conn->send(buildRequest("GET", "/gateway/echo/x", {}, "", port2_))) {
          other++;
          continue;
        }
        Response r = conn->readResponse();
        if (r.status == 200) {
          ok++;
        } else if (r.status == 429) {
          limited++;
        } else {
          other++;
        }
        if (!r.keep_alive) conn = std::make_unique<RawConnection>(port2_);
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(limited.load(), 40);
  EXPECT_EQ(other.load(), 0);
}

}  // namespace
}  // namespace sluice::test
