// round_robin — smooth weighted round robin (the nginx algorithm): every pick adds each eligible
// host's weight to its running `current`, picks the host with the largest `current`, and takes
// the sum of the eligible weights off the winner. Over one cycle of W = sum(weights) picks each
// host gets exactly its weight, interleaved (5:1:1 gives a a b a c a a, not a a a a a b c).
//
// Eligible: healthy hosts not yet tried for this request; when every healthy host was tried,
// the healthy ones. No healthy host → SLUICE_PICK_NONE.
//
// A new host set keeps the schedule state (`current`) of every host whose address stays, so
// frequent host-set changes (health flaps, discovery updates) do not restart the cycle and favor
// the heaviest host. New hosts start at 0. Ties go to the smaller address, so the order of hosts
// in a set does not matter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/sdk/balancer.h"
#include "core/api/sdk/config.h"

namespace sluice::balancers {

// Config: none (`balancer: round_robin` or `{name: round_robin}`); any key is refused.
class RoundRobinConfig {
 public:
  explicit RoundRobinConfig(const sdk::ConfigNode& node);
};

// One per cluster per worker; worker thread only.
class RoundRobin : public sdk::Balancer {
 public:
  explicit RoundRobin(const RoundRobinConfig& config) {}
  // Each worker starts its schedule `worker_index` picks further along, so that N workers'
  // first requests do not all land on the same host (each worker's own cycle stays exact).
  RoundRobin(const RoundRobinConfig& config, const sdk::BalancerContext& context)
      : stagger_(context.workerIndex()) {}

  void onHostSet(const sdk::HostSet& hosts) override;
  int64_t pick(const sdk::PickContext& ctx) override;

 private:
  struct Peer {
    std::string address;
    int64_t weight = 1;
    int64_t current = 0;
    bool healthy = false;
  };
  std::vector<Peer> peers_;  // same order as the current host set
  uint32_t stagger_ = 0;     // picks to skip once the first non-empty set arrives
};

}  // namespace sluice::balancers
