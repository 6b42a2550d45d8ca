// p2c — power of two choices (Mitzenmacher): draw two distinct eligible hosts at random, each
// with probability proportional to its weight, and send the request to the less loaded of the
// two. Nearly as good as scanning every host for the least loaded, in O(log hosts) per pick, and
// without the herd that "least loaded" causes when many workers read the same counts.
//
// Load (lower wins; ties go to the first draw):
//   latency_aware: false  in-flight requests / weight (the core's cluster-wide atomic count,
//                         compared as active_a * weight_b < active_b * weight_a)
//   latency_aware: true   peak-EWMA latency × (in-flight / weight + 1 / mean weight), Finagle's
//                         P2CPeakEwma cost, latency × (in-flight + 1), generalised to weights:
//                         the "+ 1" is one request on a host of the mean healthy weight, so for
//                         equal weights it is Finagle's cost divided by the weight; idle hosts of
//                         equal latency tie (the weighted draw then decides) and under load
//                         in-flight settles in proportion to weight.
//                         The EWMA (peak_ewma.h) is fed by onResult: a success counts its
//                         latency, a failure (5xx, connect failure, timeout, reset) counts at
//                         least `failure_penalty_ms`, a cancelled attempt counts nothing. A host
//                         with no sample yet counts latency 0 while idle and
//                         `failure_penalty_ms` while busy (so a new host gets one probe at a
//                         time). EWMA state is per worker and kept by address across host-set
//                         changes.
//
// Eligible: healthy hosts not yet tried for this request; when every healthy host was tried,
// the healthy ones. One eligible host → that host. No healthy host → SLUICE_PICK_NONE.
//
// YAML:
//   balancer:
//     name: p2c
//     config:
//       latency_aware: false       # true: weigh in-flight by peak-EWMA latency
//       decay_ms: 10000            # EWMA time constant (latency_aware only)
//       failure_penalty_ms: 1000   # latency a failed attempt counts as (latency_aware only)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "balancers/p2c/peak_ewma.h"
#include "core/api/sdk/balancer.h"
#include "core/api/sdk/config.h"

namespace sluice::balancers {

// Immutable after construction (main thread); read by every worker.
struct P2cConfig {
  explicit P2cConfig(const sdk::ConfigNode& node);

  bool latency_aware = false;
  uint64_t decay_us = 10'000'000;
  uint64_t failure_penalty_us = 1'000'000;
};

// One per cluster per worker; worker thread only.
class P2c : public sdk::Balancer {
 public:
  P2c(const P2cConfig& config, const sdk::BalancerContext& context)
      : config_(config), context_(context) {}

  // Called on the worker once after construction and on every change of hosts, weights or
  // health: rebuilds the cumulative weights, carries each staying address's EWMA over.
  void onHostSet(const sdk::HostSet& hosts) override;
  // Called on the worker once per upstream attempt: two weighted draws and one comparison.
  int64_t pick(const sdk::PickContext& ctx) override;
  // Called on the worker when an attempt on host `index` ends: feeds the EWMA (latency_aware).
  void onResult(uint32_t index, sdk::Outcome outcome, uint64_t latency_us) override;

 private:
  struct Peer {
    std::string address;
    uint32_t weight = 0;  // 0 = unhealthy
    PeakEwma ewma;
  };
  // A uniform number in [0, bound), bound > 0.
  uint64_t uniform(uint64_t bound) const;
  // Two distinct weighted draws among the eligible hosts on a retry (slow path, O(hosts)).
  void drawUntried(const sdk::PickContext& ctx, int64_t* a, int64_t* b);
  // The less loaded of hosts a and b (a on a tie).
  int64_t lessLoaded(int64_t a, int64_t b) const;
  double latencyLoad(size_t i, uint64_t now_us) const;

  const P2cConfig& config_;
  sdk::BalancerContext context_;
  std::optional<sdk::HostSet> hosts_;  // the current set, valid until the next onHostSet
  std::vector<Peer> peers_;            // same order as hosts_
  std::vector<uint64_t> cumulative_;   // running sum of the healthy weights
  double one_request_ = 0;             // 1 / mean healthy weight (latency_aware's "+ 1")
};

}  // namespace sluice::balancers
