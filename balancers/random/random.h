// random — weighted random: each eligible host is picked with probability weight / sum of the
// eligible weights, drawn from the worker's generator (the host's random() callback).
//
// Eligible: healthy hosts not yet tried for this request; when every healthy host was tried,
// the healthy ones. No healthy host → SLUICE_PICK_NONE. Stateless between picks, so host-set
// changes cannot skew it.
#pragma once

#include <cstdint>

#include "balancers/common/host_weights.h"
#include "core/api/sdk/balancer.h"
#include "core/api/sdk/config.h"

namespace sluice::balancers {

// Config: none (`balancer: random` or `{name: random}`); any key is refused.
class RandomConfig {
 public:
  explicit RandomConfig(const sdk::ConfigNode& node);
};

// One per cluster per worker; worker thread only.
class Random : public sdk::Balancer {
 public:
  Random(const RandomConfig& config, const sdk::BalancerContext& context) : context_(context) {}

  // Called on the worker once after construction and on every change of hosts, weights or
  // health: keeps each host's weight (0 when unhealthy).
  void onHostSet(const sdk::HostSet& hosts) override;
  // Called on the worker once per upstream attempt: one random number, a binary search (a scan
  // of the hosts on a retry).
  int64_t pick(const sdk::PickContext& ctx) override;

 private:
  sdk::BalancerContext context_;
  HostWeights hosts_;  // weights and health of the current set
};

}  // namespace sluice::balancers
