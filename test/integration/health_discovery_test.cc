// Health state across host-set changes and reloads, for clusters made by discovery from
// `cluster_defaults`: a host kept by address keeps its state, a removed host stops being
// probed, a changed `health_check` applies. Also slow start of a host that returns.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kConfig[] = R"(workers: 2
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
discovery:
  - name: file
    path: ${FILE_SO}
    config: { path: ${ENDPOINTS}, interval_ms: 50 }
    cluster_defaults:
      health_check: {path: ${CHECK_PATH}, interval_ms: 200, interval_jitter_ms: 0,
                     timeout_ms: 300, healthy_threshold: 1, unhealthy_threshold: 1}
)";

nlohmann::json hostState(int admin, const std::string& address) {
  Response r = httpGet(admin, "/clusters");
  auto doc = nlohmann::json::parse(r.body, nullptr, false);
  if (doc.is_discarded()) return nullptr;
  for (const auto& c : doc["clusters"]) {
    if (c["name"] != "pool") continue;
    for (const auto& h : c["hosts"]) {
      if (h["address"] == address) return h;
    }
  }
  return nullptr;
}

template <typename Pred>
bool waitFor(Pred pred, int timeout_ms = 20000) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool hostIs(int admin, const std::string& address, const std::string& health) {
  nlohmann::json h = hostState(admin, address);
  return !h.is_null() && h["health"] == health;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HealthDiscoveryTest, StateSurvivesHostSetChangesAndReloads) {
  EchoBackend b0("b0"), b1("b1");
  DeadPort dead;
  const std::string endpoints = uniqueTmpPath("endpoints.yaml");
  auto writeEndpoints = [&](const std::string& list) {
    ASSERT_TRUE(writeFile(endpoints + ".tmp", "clusters:\n  pool: [" + list + "]\n"));
    ASSERT_EQ(rename((endpoints + ".tmp").c_str(), endpoints.c_str()), 0);
  };
  writeEndpoints(b0.address() + ", " + dead.address());
  Gateway gw(kConfig, {{"FILE_SO", runfile("discovery/file/libfile.so")},
                       {"ENDPOINTS", endpoints},
                       {"CHECK_PATH", "/"}});
  ASSERT_TRUE(gw.ready());
  const int admin = gw.adminPort();
  // cluster_defaults' health_check runs on the discovered cluster.
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, dead.address(), "unhealthy"); }));
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, b0.address(), "healthy"); }));
  const std::string line = "host " + dead.address() + " of cluster 'pool' unhealthy after";
  ASSERT_TRUE(gw.process().waitForOutput(line));

  // A host-set change: the kept hosts keep their state (no new "unknown", no second verdict);
  // the new host is checked.
  writeEndpoints(b0.address() + ", " + dead.address() + ", " + b1.address());
  ASSERT_TRUE(waitFor([&] { return !hostState(admin, b1.address()).is_null(); }));
  EXPECT_TRUE(hostIs(admin, dead.address(), "unhealthy"));
  EXPECT_TRUE(hostIs(admin, b0.address(), "healthy"));
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, b1.address(), "healthy"); }));
  EXPECT_EQ(count(gw.process().output(), line), 1u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(httpGet(gw.port(), "/gateway/pool/x").status, 200);

  // A removed host stops being probed: its series go (they belong to the host).
  writeEndpoints(b0.address() + ", " + b1.address());
  const std::string series = "host=\"" + dead.address() + "\"";
  EXPECT_TRUE(waitFor([&] {
    return httpGet(admin, "/stats/prometheus").body.find(series) == std::string::npos;
  })) << "the removed host is still probed";

  // A reload changing health_check applies it: the new path answers 503, so both hosts fail.
  std::string text = readFile(gw.configPath());
  size_t at = text.find("path: /,");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, "path: /status/503,");
  ASSERT_TRUE(writeFile(gw.configPath(), text));
  gw.process().signal(SIGHUP);
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, b0.address(), "unhealthy"); }))
      << gw.process().outputTail();
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, b1.address(), "unhealthy"); }));
  EXPECT_EQ(hostState(admin, b0.address())["last_check_failure"], "status 503");
}

constexpr char kSlowStart[] = R"(workers: 1
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: pool
    endpoints: [${B0}, ${B1}]
    slow_start_ms: 3000
    health_check: {path: /, interval_ms: 100, interval_jitter_ms: 0, timeout_ms: 200,
                   healthy_threshold: 1, unhealthy_threshold: 1}
)";

// A host that comes back ramps its weight up over slow_start_ms; the first hosts do not.
TEST(HealthDiscoveryTest, RecoveredHostRampsUpItsWeight) {
  EchoBackend b0("b0"), b1("b1");
  Gateway gw(kSlowStart, {{"B0", b0.address()}, {"B1", b1.address()}});
  ASSERT_TRUE(gw.ready());
  const int admin = gw.adminPort();
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, b1.address(), "healthy"); }));
  EXPECT_EQ(hostState(admin, b0.address())["effective_weight"], 10);  // full weight at start
  EXPECT_EQ(hostState(admin, b1.address())["effective_weight"], 10);
  ASSERT_TRUE(b1.process().signal(SIGSTOP));
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, b1.address(), "unhealthy"); }));
  ASSERT_TRUE(b1.process().signal(SIGCONT));
  ASSERT_TRUE(waitFor([&] { return hostIs(admin, b1.address(), "healthy"); }));
  int first = hostState(admin, b1.address())["effective_weight"].get<int>();
  EXPECT_LT(first, 10) << "no ramp after the return";
  EXPECT_GE(first, 1);
  // It climbs in steps and reaches the full weight at the end of the window.
  int last = first;
  bool climbed = false;
  EXPECT_TRUE(waitFor([&] {
    int w = hostState(admin, b1.address())["effective_weight"].get<int>();
    climbed = climbed || (w > last && w < 10);
    last = w;
    return w == 10;
  }));
  EXPECT_TRUE(climbed) << "went to full weight in one jump";
}

}  // namespace
}  // namespace sluice::test
