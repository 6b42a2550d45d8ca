// HostWeights — the per-host weights that the weighted balancers (random, ring_hash, maglev)
// keep between a host set and the picks over it, with the two rules they share:
//
//   - Eligible: a host is eligible when it is healthy and, while some healthy host has not been
//     tried for this request, not tried yet; once every healthy host was tried, any healthy host.
//   - Weighted random: each eligible host with probability weight / sum of the eligible weights,
//     from one 64-bit random number (random's pick; the hash balancers' pick for an empty key).
//
// A host's weight is max(1, its weight) when healthy, 0 when not. The consistent-hash balancers
// also keep each host's (address, weight), healthy or not: the layout their table is built from,
// which health changes alone leave unchanged.
//
// Threads: owned by one balancer instance and used only on that balancer's worker thread
// (sdk/balancer.h), like the balancer itself: no locks. Call order: assign() or
// assignWithLayout() from every onHostSet; the pick-time methods from pick().
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/api/sdk/balancer.h"

namespace sluice::balancers {

class HostWeights {
 public:
  // (address, weight ≥ 1) per host of the set, in the set's order, healthy or not.
  using Layout = std::vector<std::pair<std::string, uint32_t>>;

  // Called from onHostSet (worker thread), on every host set: takes each host's weight and
  // health. Picks then index the hosts as this set does.
  void assign(const sdk::HostSet& hosts) {
    weights_.assign(hosts.size(), 0);
    cumulative_.assign(hosts.size(), 0);
    uint64_t sum = 0;
    for (size_t i = 0; i < hosts.size(); ++i) {
      sdk::HostEntry h = hosts[i];
      if (h.healthy()) weights_[i] = std::max<uint32_t>(h.weight(), 1);
      sum += weights_[i];
      cumulative_[i] = sum;
    }
  }

  // Called instead of assign() from onHostSet (worker thread) by the consistent-hash balancers:
  // assign(), and keeps the layout. True when the layout changed (an address or weight, or the
  // order or number of hosts), so the balancer's table must be rebuilt from layout(); false on
  // health changes alone.
  bool assignWithLayout(const sdk::HostSet& hosts) {
    assign(hosts);
    Layout layout(hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i) {
      sdk::HostEntry h = hosts[i];
      layout[i] = {std::string(h.address()), std::max<uint32_t>(h.weight(), 1)};
    }
    if (layout == layout_) return false;
    layout_ = std::move(layout);
    return true;
  }

  // The layout of the last assignWithLayout() (empty if only assign() was used).
  const Layout& layout() const { return layout_; }

  // Called from pick (worker thread) before anything else: false means SLUICE_PICK_NONE.
  bool anyHealthy() const { return !cumulative_.empty() && cumulative_.back() != 0; }

  // Called from pick (worker thread), once per pick: true when this request has tried hosts and
  // some healthy host is not among them, so the tried ones must be avoided. Pass the result to
  // eligible() and pickRandom() for the rest of the pick.
  bool avoidTried(const sdk::PickContext& ctx) const {
    bool avoid_tried = false;
    if (ctx.triedCount() > 0) {
      for (size_t i = 0; i < weights_.size() && !avoid_tried; ++i) {
        avoid_tried = weights_[i] != 0 && !ctx.wasTried(i);
      }
    }
    return avoid_tried;
  }

  // Called from pick (worker thread): whether host `i` (an index into the last set) may be
  // picked for this request; `avoid_tried` from avoidTried(ctx).
  bool eligible(size_t i, const sdk::PickContext& ctx, bool avoid_tried) const {
    return weights_[i] != 0 && !(avoid_tried && ctx.wasTried(i));
  }

  // Called from pick (worker thread), only when anyHealthy(): a weighted random eligible host.
  // `random`: 64 uniformly random bits (the balancer's context.random(), one per call).
  int64_t pickRandom(const sdk::PickContext& ctx, bool avoid_tried, uint64_t random) const {
    if (!avoid_tried) {
      uint64_t r = uniform(random, cumulative_.back());
      return std::upper_bound(cumulative_.begin(), cumulative_.end(), r) - cumulative_.begin();
    }
    uint64_t total = 0;
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (eligible(i, ctx, avoid_tried)) total += weights_[i];
    }
    uint64_t r = uniform(random, total);
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (!eligible(i, ctx, avoid_tried)) continue;
      if (r < weights_[i]) return static_cast<int64_t>(i);
      r -= weights_[i];
    }
    return sdk::kPickNone;  // not reached: some eligible host has weight > r
  }

  // Maps 64 random bits onto [0, bound), bound > 0, by multiply-shift (bias below bound / 2^64).
  static uint64_t uniform(uint64_t random, uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(random) * bound) >> 64);
  }

 private:
  Layout layout_;
  std::vector<uint32_t> weights_;     // per host; 0 = unhealthy
  std::vector<uint64_t> cumulative_;  // running sum of weights_
};

}  // namespace sluice::balancers
