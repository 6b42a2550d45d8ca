// The health state of one upstream host, shared by every worker (it lives in upstream::Host,
// which survives host-set changes and reloads).
//
// Two independent verdicts decide whether a host takes traffic: the active health check
// (unknown / healthy / unhealthy, from probes) and passive outlier detection (ejected or not,
// from request outcomes). A host is usable when neither excludes it: active status not
// unhealthy and not ejected. "Unknown" (never probed yet, or health checking off) is usable.
//
// Threads: the atomics are read by workers (balancers see them through the HostSet C view the
// main thread builds) and the admin; the consecutive-failure counters are updated by workers;
// everything else is written by the main thread only (health::HealthManager).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "core/common/log.h"
#include "core/stats/registry.h"

namespace sluice::upstream {

enum class ActiveHealth : uint8_t { kUnknown = 0, kHealthy = 1, kUnhealthy = 2 };

const char* activeHealthName(ActiveHealth h);  // "unknown", "healthy", "unhealthy"

// The series of one host's health ({cluster, host}); main thread updates them.
struct HostHealthStats {
  HostHealthStats(const std::string& cluster, const std::string& host,
                  stats::Registry& registry = stats::defaultRegistry());
  stats::Gauge state[3];  // by ActiveHealth: 1 for the current state, 0 for the others
  stats::Gauge ejected;   // 1 while ejected
  stats::Gauge effective_weight;
  stats::Counter ejections_5xx;
  stats::Counter ejections_gateway;
  stats::Counter checks_success;
  stats::Counter checks_failure;
  stats::Counter checks_timeout;
};

struct HostHealth {
  HostHealth(const std::string& cluster, const std::string& host) : stats(cluster, host) {}

  bool usable() const {
    return active.load(std::memory_order_relaxed) != ActiveHealth::kUnhealthy &&
           !ejected.load(std::memory_order_relaxed);
  }

  // ---- shared (atomics)
  std::atomic<ActiveHealth> active{ActiveHealth::kUnknown};
  std::atomic<bool> ejected{false};
  // Outlier detection counters, updated by workers on every attempt result.
  std::atomic<uint32_t> consecutive_5xx{0};
  std::atomic<uint32_t> consecutive_gateway{0};
  // Milliseconds (steady clock) until which the host is ejected; 0 when not. Written by the
  // main thread, read by the admin (also main thread).
  std::atomic<uint64_t> ejected_until_ms{0};
  std::atomic<uint32_t> times_ejected{0};
  // The weight balancers last saw (slow start applied); for the admin.
  std::atomic<uint32_t> effective_weight{0};

  // ---- main thread only
  uint32_t check_successes = 0;   // consecutive probe successes
  uint32_t check_failures = 0;    // consecutive probe failures
  uint64_t warming_since_ms = 0;  // slow start began (steady ms); 0 = not ramping
  uint32_t published_step = 0;    // the slow-start step balancers last saw
  uint64_t last_ejection_end_ms = 0;
  std::string last_failure;       // reason of the last failed probe
  log::Throttle not_ejected_log;  // "not ejected" lines (steady ms; main thread)

  HostHealthStats stats;
};

}  // namespace sluice::upstream
