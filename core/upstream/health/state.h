// The health state machines, as pure functions over a host's HostHealth and its cluster's
// config (unit-tested in test/core/health_state_test.cc). Main thread, except recordOutcome
// (any worker).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/api/balancer.h"
#include "core/config/config.h"
#include "core/upstream/host_health.h"

namespace sluice::upstream::health {

// Same settings = same probes (a reload keeps their schedules).
std::string healthCheckKey(const config::HealthCheck& cfg);
// Every health setting of a cluster, for the reload's "settings changed" key.
std::string settingsKey(const config::Cluster& c);

// One probe result on `h`. Unknown takes the first verdict at once (a host nobody has checked
// yet is used, and the first probe decides); healthy becomes unhealthy after
// `unhealthy_threshold` consecutive failures, unhealthy becomes healthy after
// `healthy_threshold` consecutive successes (no flapping on one odd probe). Returns true when
// the active state changed.
bool applyProbe(HostHealth& h, bool ok, const config::HealthCheck& cfg);

enum class Ejection { kNone, kConsecutive5xx, kConsecutiveGateway };
const char* ejectionReason(Ejection e);  // "consecutive_5xx", "consecutive_gateway_failure"

// Counts one attempt outcome in `h`'s consecutive counters (worker thread, atomics). 5xx
// responses and gateway failures (connect failure, timeout, reset) count as 5xx; gateway
// failures also count as gateway failures; a success resets both; a 5xx response resets the
// gateway count (the host answered); a cancelled attempt counts for nothing. Returns the
// reason when a counter just reached its threshold (exactly once per streak).
Ejection recordOutcome(HostHealth& h, sluice_outcome outcome, const config::OutlierDetection& cfg);

// How long the `times`-th ejection (1-based) lasts: base x times, capped at max (ms).
uint64_t ejectionDurationMs(const config::OutlierDetection& cfg, uint32_t times);

// How many of `hosts` may be ejected at once: floor(hosts x percent / 100), never all of them
// (at most hosts - 1). So 2 hosts at 10% eject none (Envoy ejects one there,
// envoyproxy/envoy#3263), 2 hosts at 50% eject one, 1 host is never ejected.
size_t maxEjectable(size_t hosts, uint32_t percent);

// Below the panic threshold: usable x 100 < threshold x total. Never with threshold 0 or no
// hosts.
bool inPanic(size_t usable, size_t total, uint32_t threshold_percent);

// Weights are multiplied by this when slow start is on, so a weight-1 host can ramp in steps.
constexpr uint32_t kSlowStartScale = 10;
// Slow start steps: the window is walked in this many equal steps.
constexpr uint32_t kSlowStartSteps = 10;

// The effective weight (on the kSlowStartScale scale) of a host of `weight` that began warming
// `elapsed_ms` ago in a window of `window_ms`: weight x scale x step / steps, where step runs
// 1..steps (so it starts at a tenth, never 0), full weight once the window is over.
uint32_t slowStartWeight(uint32_t weight, uint64_t elapsed_ms, uint64_t window_ms);
// The step (1..kSlowStartSteps) of slowStartWeight, or 0 once the window is over.
uint32_t slowStartStep(uint64_t elapsed_ms, uint64_t window_ms);

}  // namespace sluice::upstream::health
