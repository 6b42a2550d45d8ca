// ring_hash — Ketama-style consistent hashing on the request's hash key (the cluster's
// `hash_key:` policy: header, cookie, query parameter, client IP or path).
//
// Ring: every host of the set — healthy or not, so health flaps never move other hosts' keys —
// gets weight × R points, point j at MurmurHash64A("<address>_<j>"); the points are sorted by
// hash. A key hashes (MurmurHash64A, murmur_hash.h) onto the ring and belongs to the first point
// at or after it, wrapping around (binary search, O(log points)).
//
// R, the points per unit of weight, is the smallest power of two that gives the ring at least
// `min_ring_size` points (so the ring holds min_ring_size to 2 × min_ring_size points), halved
// while the ring would exceed `max_ring_size` (if even R = 1 exceeds it, each host gets
// max(1, weight × max_ring_size / total weight) points). Like Envoy, points are proportional to
// weight and the ring never falls below min_ring_size points; unlike Envoy's exact scale, the
// power of two keeps R — and so every staying host's points — unchanged when a host joins or
// leaves, unless the total weight crosses min_ring_size / 2^k. A leaving host then moves only
// its own keys and a joining host takes only keys, about weight / total weight of them. When R
// does change, every host gains or loses half its points and about half the keys move, once.
//
// Pick: the host owning the key's point, if eligible; otherwise walk clockwise to the next point
// of an eligible host (distinct from the ineligible ones), so the keys of a down or already
// tried host spread over the hosts that follow its points. Eligible: healthy and not yet tried
// for this request; when every healthy host was tried, any healthy host. No healthy host →
// SLUICE_PICK_NONE. An empty key (the request lacks it, or the cluster has no hash_key) falls
// back to weighted random among the eligible hosts.
//
// Every worker builds the same ring from the same set (the ring does not depend on the order of
// the hosts in the set), so all workers agree on every key.
//
// YAML:
//   balancer:
//     name: ring_hash
//     config:
//       min_ring_size: 1024        # 1 .. 8388608
//       max_ring_size: 8388608     # min_ring_size .. 8388608
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "balancers/common/host_weights.h"
#include "core/api/sdk/balancer.h"
#include "core/api/sdk/config.h"

namespace sluice::balancers {

// Immutable after construction (main thread); read by every worker.
struct RingHashConfig {
  explicit RingHashConfig(const sdk::ConfigNode& node);

  uint64_t min_ring_size = 1024;
  uint64_t max_ring_size = 8388608;
};

// One per cluster per worker; worker thread only.
class RingHash : public sdk::Balancer {
 public:
  RingHash(const RingHashConfig& config, const sdk::BalancerContext& context)
      : config_(config), context_(context) {}

  // Called on the worker once after construction and on every change of hosts, weights or
  // health: rebuilds the ring when addresses or weights changed (not on health changes alone).
  void onHostSet(const sdk::HostSet& hosts) override;
  // Called on the worker once per upstream attempt: one hash, one binary search, a short walk.
  int64_t pick(const sdk::PickContext& ctx) override;

  // The ring's size and its points per unit of weight (R above); for tests and logs.
  size_t ringSize() const { return ring_hashes_.size(); }
  uint64_t pointsPerWeight() const { return points_per_weight_; }

 private:
  // Rebuilds the ring from hosts_.layout().
  void buildRing();

  const RingHashConfig& config_;
  sdk::BalancerContext context_;
  HostWeights hosts_;                  // weights, health and layout of the current set
  std::vector<uint64_t> ring_hashes_;  // sorted point hashes
  std::vector<uint32_t> ring_hosts_;   // host index of each point
  uint64_t points_per_weight_ = 0;
};

}  // namespace sluice::balancers
