// least_active — the fewest in-flight requests, weight-aware: pick the eligible host with the
// smallest activeRequests / weight (compared as active_a * weight_b < active_b * weight_a, no
// division), so a weight-3 host carries three times the in-flight load of a weight-1 host before
// it stops being preferred. Equal loads are broken at random in proportion to weight (weighted
// reservoir sampling over the worker's random(); uniform for equal weights), so idle hosts share
// the traffic by weight instead of the first one taking it all.
//
// The in-flight count is the core's per-host atomic, shared by all workers and decremented when
// a request ends (aborted or not), so every worker sees the cluster-wide load. A pick reads it
// once per eligible host: O(hosts), no locks, no allocation.
//
// Eligible: healthy hosts not yet tried for this request; when every healthy host was tried,
// the healthy ones. No healthy host → SLUICE_PICK_NONE. The balancer keeps no schedule between
// picks, so host-set changes cannot skew it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/api/sdk/balancer.h"
#include "core/api/sdk/config.h"

namespace sluice::balancers {

// Config: none (`balancer: least_active` or `{name: least_active}`); any key is refused.
// Main thread, once per cluster that names the balancer.
class LeastActiveConfig {
 public:
  explicit LeastActiveConfig(const sdk::ConfigNode& node);
};

// One per cluster per worker; worker thread only.
class LeastActive : public sdk::Balancer {
 public:
  LeastActive(const LeastActiveConfig& config, const sdk::BalancerContext& context)
      : context_(context) {}

  // Called on the worker once after construction and on every change of hosts, weights or
  // health: keeps the set (to read in-flight counts) and each host's weight, 0 when unhealthy.
  void onHostSet(const sdk::HostSet& hosts) override;
  // Called on the worker once per upstream attempt: one pass over the eligible hosts.
  int64_t pick(const sdk::PickContext& ctx) override;

 private:
  sdk::BalancerContext context_;
  std::optional<sdk::HostSet> hosts_;  // the current set, valid until the next onHostSet
  std::vector<uint32_t> weights_;      // per host of hosts_; 0 = unhealthy
};

}  // namespace sluice::balancers
