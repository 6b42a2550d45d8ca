#include "balancers/least_active/least_active.h"

#include <algorithm>

namespace sluice::balancers {

LeastActiveConfig::LeastActiveConfig(const sdk::ConfigNode& node) { node.requireOnlyKeys({}); }

void LeastActive::onHostSet(const sdk::HostSet& hosts) {
  hosts_.emplace(hosts);
  weights_.assign(hosts.size(), 0);
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i].healthy()) weights_[i] = std::max<uint32_t>(hosts[i].weight(), 1);
  }
}

int64_t LeastActive::pick(const sdk::PickContext& ctx) {
  // Avoid hosts already tried unless every healthy host was tried.
  bool avoid_tried = false;
  if (ctx.triedCount() > 0) {
    for (size_t i = 0; i < weights_.size() && !avoid_tried; ++i) {
      avoid_tried = weights_[i] != 0 && !ctx.wasTried(i);
    }
  }
  int64_t best = -1;
  uint64_t best_active = 0;
  uint64_t best_weight = 1;
  uint64_t tied_weight = 0;  // sum of the weights of the hosts seen with the best load so far
  for (size_t i = 0; i < weights_.size(); ++i) {
    uint64_t weight = weights_[i];
    if (weight == 0 || (avoid_tried && ctx.wasTried(i))) continue;
    uint64_t active = hosts_->activeRequests(i);
    // active / weight against best_active / best_weight, in integers (both < 2^32).
    uint64_t lhs = active * best_weight;
    uint64_t rhs = best_active * weight;
    if (best < 0 || lhs < rhs) {
      best = static_cast<int64_t>(i);
      best_active = active;
      best_weight = weight;
      tied_weight = weight;
    } else if (lhs == rhs) {
      // Weighted reservoir sampling: an equal host replaces the choice with probability
      // weight / (weight of the equal hosts so far), so each tied host ends up chosen with
      // probability weight / tied_weight (1 / ties for equal weights).
      tied_weight += weight;
      uint64_t r = static_cast<uint64_t>(
          (static_cast<unsigned __int128>(context_.random()) * tied_weight) >> 64);
      if (r < weight) best = static_cast<int64_t>(i);
    }
  }
  return best < 0 ? sdk::kPickNone : best;
}

}  // namespace sluice::balancers

SLUICE_BALANCER_PLUGIN("least_active", "1.0.0", sluice::balancers::LeastActiveConfig,
                       sluice::balancers::LeastActive)
