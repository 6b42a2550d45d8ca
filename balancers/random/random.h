// random — weighted random: each eligible host is picked with probability weight / sum of the
// eligible weights, drawn from the worker's generator (the host's random() callback).
//
// Eligible: healthy hosts not yet tried for this request; when every healthy host was tried,
// the healthy ones. No healthy host → SLUICE_PICK_NONE. Stateless between picks, so host-set
// changes cannot skew it.
#pragma once

#include <cstdint>
#include <vector>

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

  void onHostSet(const sdk::HostSet& hosts) override;
  int64_t pick(const sdk::PickContext& ctx) override;

 private:
  // A uniform number in [0, bound), bound > 0.
  uint64_t uniform(uint64_t bound) const;

  sdk::BalancerContext context_;
  std::vector<uint32_t> weights_;     // 0 for unhealthy hosts
  std::vector<uint64_t> cumulative_;  // running sum of weights_, for the common no-retry pick
};

}  // namespace sluice::balancers
