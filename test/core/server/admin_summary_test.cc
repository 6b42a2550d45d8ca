// GET /stats/summary's document (admin_summary.h) from a registry with real listener series:
// process facts, per-listener responses by class, connections and the duration histogram with
// its percentiles, and totals over all listeners.
#include "core/server/admin_summary.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/stats/families.h"

namespace sluice::server {
namespace {

SummaryFacts facts() {
  SummaryFacts f;
  f.now_ms = 1700000123456;
  f.started_at = 1700000000;
  f.version = "9.9.9";
  f.workers = 2;
  f.config_version = 3;
  f.reloads_ok = 2;
  f.reloads_failed = 1;
  f.last_reload_at = 1700000100;
  f.last_reload_ok = false;
  f.draining = true;
  f.listeners = {{"edge", "127.0.0.1:8080", "/gateway", false},
                 {"secure \"one\"", "[::1]:8443", "", true}};
  return f;
}

TEST(AdminSummary, ReportsFactsListenersAndTotals) {
  stats::Registry r;
  stats::ListenerStats edge("edge", {}, r);
  stats::ListenerStats secure("secure \"one\"", {"protocol"}, r);
  for (int i = 0; i < 8; ++i) edge.response(200);
  edge.response(404);
  edge.response(503);
  secure.response(302);
  edge.received.inc(10);
  secure.received.inc(1);
  edge.refused.inc(2);
  edge.cx_total.inc(4);
  edge.cx_active.add(3);
  for (int i = 0; i < 9; ++i) edge.duration.observe(0.002);  // (1 ms, 2.5 ms]
  edge.duration.observe(0.7);                                // (0.5 s, 1 s]
  secure.duration.observe(0.0001);

  nlohmann::json s = nlohmann::json::parse(summaryJson(facts(), r));
  EXPECT_EQ(s["time_ms"], 1700000123456);
  EXPECT_EQ(s["started_at"], 1700000000);
  EXPECT_EQ(s["uptime_s"], 123);
  EXPECT_EQ(s["version"], "9.9.9");
  EXPECT_EQ(s["workers"], 2);
  EXPECT_EQ(s["config_version"], 3);
  EXPECT_EQ(s["reloads_ok"], 2);
  EXPECT_EQ(s["reloads_failed"], 1);
  EXPECT_EQ(s["last_reload"]["at"], 1700000100);
  EXPECT_EQ(s["last_reload"]["ok"], false);
  EXPECT_EQ(s["draining"], true);

  ASSERT_EQ(s["listeners"].size(), 2u);
  const nlohmann::json& e = s["listeners"][0];
  EXPECT_EQ(e["name"], "edge");
  EXPECT_EQ(e["address"], "127.0.0.1:8080");
  EXPECT_EQ(e["context_path"], "/gateway");
  EXPECT_EQ(e["tls"], false);
  EXPECT_EQ(e["received"], 10);
  EXPECT_EQ(e["refused"], 2);
  EXPECT_EQ(e["responses"], nlohmann::json({{"2xx", 8}, {"3xx", 0}, {"4xx", 1}, {"5xx", 1}}));
  EXPECT_EQ(e["connections_active"], 3);
  EXPECT_EQ(e["connections_total"], 4);
  const nlohmann::json& d = e["duration_seconds"];
  EXPECT_EQ(d["count"], 10);
  EXPECT_NEAR(d["sum"].get<double>(), 0.718, 1e-9);
  EXPECT_EQ(d["le"].size(), stats::latencyBuckets().size());
  EXPECT_EQ(d["counts"][2], 9);   // (1 ms, 2.5 ms]
  EXPECT_EQ(d["counts"][10], 1);  // (0.5 s, 1 s]
  // Ranks 5, 9 and 9.9 of 10: inside (1 ms, 2.5 ms] for p50 and p90, the slow one for p99.
  EXPECT_NEAR(d["p50"].get<double>(), 0.001 + 0.0015 * 5 / 9, 1e-9);
  EXPECT_NEAR(d["p90"].get<double>(), 0.0025, 1e-9);
  EXPECT_NEAR(d["p99"].get<double>(), 0.5 + 0.5 * 0.9, 1e-9);

  const nlohmann::json& t = s["listeners"][1];
  EXPECT_EQ(t["name"], "secure \"one\"");  // escaped in the JSON, intact once parsed
  EXPECT_EQ(t["address"], "[::1]:8443");
  EXPECT_EQ(t["tls"], true);
  EXPECT_EQ(t["responses"]["3xx"], 1);

  const nlohmann::json& total = s["total"];
  EXPECT_EQ(total["responses"], nlohmann::json({{"2xx", 8}, {"3xx", 1}, {"4xx", 1}, {"5xx", 1}}));
  EXPECT_EQ(total["received"], 11);
  EXPECT_EQ(total["duration_seconds"]["count"], 11);
  EXPECT_EQ(total["duration_seconds"]["counts"][0], 1);
}

TEST(AdminSummary, NoTrafficHasNullPercentilesAndNoListenersIsAnEmptyList) {
  stats::Registry r;
  SummaryFacts f = facts();
  f.listeners.clear();
  f.last_reload_at = 0;
  nlohmann::json s = nlohmann::json::parse(summaryJson(f, r));
  EXPECT_TRUE(s["listeners"].is_array());
  EXPECT_TRUE(s["listeners"].empty());
  EXPECT_TRUE(s["last_reload"].is_null());
  const nlohmann::json& d = s["total"]["duration_seconds"];
  EXPECT_EQ(d["count"], 0);
  EXPECT_EQ(d["counts"].size(), stats::latencyBuckets().size() + 1);
  EXPECT_TRUE(d["p50"].is_null());
  EXPECT_TRUE(d["p99"].is_null());
}

}  // namespace
}  // namespace sluice::server
