// Helpers of the resilience tests (retries, budgets, breakers, timeouts, deadlines).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "test/harness/harness.h"

namespace sluice::test {

// GET /stats/prometheus on the admin port ("" on failure).
inline std::string scrapeMetrics(int admin_port) {
  Response r = httpGet(admin_port, "/stats/prometheus");
  return r.status == 200 ? r.body : "";
}

// The value of sample `name{labels}` in a scrape (exact spelling, e.g.
// `sluice_upstream_retries_total{cluster="up"}`), or -1 when absent.
inline double metricValue(const std::string& scrape, const std::string& name) {
  size_t at = ("\n" + scrape).find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(scrape.substr(at + name.size() + 1));
}

inline double metric(int admin_port, const std::string& name) {
  return metricValue(scrapeMetrics(admin_port), name);
}

inline int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The p-th percentile (0..100) of `v` (sorted in place); 0 when empty.
inline double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace sluice::test
