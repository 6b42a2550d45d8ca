#include "core/upstream/health/state.h"

#include <algorithm>
#include <string>

namespace sluice::upstream::health {

std::string healthCheckKey(const config::HealthCheck& cfg) {
  std::string key = cfg.enabled ? "on" : "off";
  key += cfg.type == config::HealthCheck::Type::kTcp ? "|tcp|" : "|http|";
  key += cfg.path + "|" + std::to_string(cfg.port) + "|" + cfg.host + "|";
  for (const auto& [low, high] : cfg.expected_statuses) {
    key += std::to_string(low) + "-" + std::to_string(high) + ",";
  }
  key += "|" + std::to_string(cfg.interval_ms) + "," + std::to_string(cfg.interval_jitter_ms) +
         "," + std::to_string(cfg.timeout_ms) + "," + std::to_string(cfg.healthy_threshold) + "," +
         std::to_string(cfg.unhealthy_threshold);
  return key;
}

std::string settingsKey(const config::Cluster& c) {
  const config::OutlierDetection& od = c.outlier_detection;
  return healthCheckKey(c.health_check) + "|od:" + (od.enabled ? "on," : "off,") +
         std::to_string(od.consecutive_5xx) + "," + std::to_string(od.consecutive_gateway_failure) +
         "," + std::to_string(od.base_ejection_time_ms) + "," +
         std::to_string(od.max_ejection_time_ms) + "," + std::to_string(od.max_ejection_percent) +
         "|panic:" + std::to_string(c.panic_threshold_percent) +
         "|slow:" + std::to_string(c.slow_start_ms);
}

bool applyProbe(HostHealth& h, bool ok, const config::HealthCheck& cfg) {
  ActiveHealth now = h.active.load(std::memory_order_relaxed);
  if (ok) {
    ++h.check_successes;
    h.check_failures = 0;
  } else {
    ++h.check_failures;
    h.check_successes = 0;
  }
  ActiveHealth next = now;
  switch (now) {
    case ActiveHealth::kUnknown:
      next = ok ? ActiveHealth::kHealthy : ActiveHealth::kUnhealthy;
      break;
    case ActiveHealth::kHealthy:
      if (!ok && h.check_failures >= cfg.unhealthy_threshold) next = ActiveHealth::kUnhealthy;
      break;
    case ActiveHealth::kUnhealthy:
      if (ok && h.check_successes >= cfg.healthy_threshold) next = ActiveHealth::kHealthy;
      break;
  }
  if (next == now) return false;
  h.active.store(next, std::memory_order_relaxed);
  return true;
}

const char* ejectionReason(Ejection e) {
  return e == Ejection::kConsecutiveGateway ? "consecutive_gateway_failure" : "consecutive_5xx";
}

Ejection recordOutcome(HostHealth& h, sluice_outcome outcome, const config::OutlierDetection& cfg) {
  switch (outcome) {
    case SLUICE_OUTCOME_SUCCESS:
      // Plain stores only when needed: a healthy host's hot path touches no shared line twice.
      if (h.consecutive_5xx.load(std::memory_order_relaxed) != 0) h.consecutive_5xx.store(0);
      if (h.consecutive_gateway.load(std::memory_order_relaxed) != 0) {
        h.consecutive_gateway.store(0);
      }
      return Ejection::kNone;
    case SLUICE_OUTCOME_HTTP_5XX: {
      if (h.consecutive_gateway.load(std::memory_order_relaxed) != 0) {
        h.consecutive_gateway.store(0);
      }
      uint32_t n = h.consecutive_5xx.fetch_add(1) + 1;
      return cfg.consecutive_5xx != 0 && n == cfg.consecutive_5xx ? Ejection::kConsecutive5xx
                                                                  : Ejection::kNone;
    }
    case SLUICE_OUTCOME_CONNECT_FAILURE:
    case SLUICE_OUTCOME_TIMEOUT:
    case SLUICE_OUTCOME_RESET: {
      uint32_t g = h.consecutive_gateway.fetch_add(1) + 1;
      uint32_t n = h.consecutive_5xx.fetch_add(1) + 1;
      if (cfg.consecutive_gateway_failure != 0 && g == cfg.consecutive_gateway_failure) {
        return Ejection::kConsecutiveGateway;
      }
      return cfg.consecutive_5xx != 0 && n == cfg.consecutive_5xx ? Ejection::kConsecutive5xx
                                                                  : Ejection::kNone;
    }
    default:
      return Ejection::kNone;
  }
}

uint64_t ejectionDurationMs(const config::OutlierDetection& cfg, uint32_t times) {
  uint64_t d = static_cast<uint64_t>(cfg.base_ejection_time_ms) * std::max<uint32_t>(times, 1);
  return std::min<uint64_t>(d, cfg.max_ejection_time_ms);
}

size_t maxEjectable(size_t hosts, uint32_t percent) {
  if (hosts == 0) return 0;
  size_t n = hosts * std::min<uint32_t>(percent, 100) / 100;
  return std::min(n, hosts - 1);
}

bool inPanic(size_t usable, size_t total, uint32_t threshold_percent) {
  if (threshold_percent == 0 || total == 0) return false;
  return usable * 100 < static_cast<size_t>(threshold_percent) * total;
}

uint32_t slowStartStep(uint64_t elapsed_ms, uint64_t window_ms) {
  if (window_ms == 0 || elapsed_ms >= window_ms) return 0;
  return static_cast<uint32_t>(elapsed_ms * kSlowStartSteps / window_ms + 1);  // 1..steps
}

uint32_t slowStartWeight(uint32_t weight, uint64_t elapsed_ms, uint64_t window_ms) {
  uint32_t full = std::max<uint32_t>(weight, 1) * kSlowStartScale;
  uint64_t step = slowStartStep(elapsed_ms, window_ms);
  if (step == 0) return full;
  uint64_t w = static_cast<uint64_t>(full) * step / kSlowStartSteps;
  return static_cast<uint32_t>(std::max<uint64_t>(w, 1));
}

}  // namespace sluice::upstream::health
