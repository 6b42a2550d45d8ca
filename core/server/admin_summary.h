// GET /stats/summary: one JSON document with what a dashboard (or an operator's script) needs to
// chart the proxy — process facts (uptime, config version, reloads, draining), every listener
// (address, TLS, context path) with its responses by status class, connections and request
// duration histogram, and the same totals over all listeners. Counters are cumulative since
// start: rates and recent percentiles come from the difference of two summaries (`time_ms` says
// when each was taken), as Prometheus' rate() and histogram_quantile() do. Built from the metric
// families of core/stats, so it agrees with /stats/prometheus.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats/registry.h"

namespace sluice::server {

struct SummaryListener {
  std::string name;
  std::string address;
  std::string context_path;
  bool tls = false;
};

// What the summary says besides the metrics.
struct SummaryFacts {
  uint64_t now_ms = 0;      // Unix time of the summary, in ms
  uint64_t started_at = 0;  // Unix time sluice started, in s
  std::string version;      // sluice's version
  size_t workers = 0;
  uint64_t config_version = 0;
  uint64_t reloads_ok = 0;
  uint64_t reloads_failed = 0;
  uint64_t last_reload_at = 0;  // Unix time in s; 0 = never
  bool last_reload_ok = false;
  bool draining = false;
  std::vector<SummaryListener> listeners;
};

// The JSON document (see docs/operations.md, "GET /stats/summary"), from `registry`'s core
// families (stats/families.h).
std::string summaryJson(const SummaryFacts& facts, const stats::Registry& registry);

}  // namespace sluice::server
