#include "balancers/random/random.h"

#include <algorithm>

namespace sluice::balancers {

RandomConfig::RandomConfig(const sdk::ConfigNode& node) { node.requireOnlyKeys({}); }

void Random::onHostSet(const sdk::HostSet& hosts) {
  weights_.assign(hosts.size(), 0);
  cumulative_.assign(hosts.size(), 0);
  uint64_t sum = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    sdk::HostEntry h = hosts[i];
    weights_[i] = h.healthy() ? std::max<uint32_t>(h.weight(), 1) : 0;
    sum += weights_[i];
    cumulative_[i] = sum;
  }
}

uint64_t Random::uniform(uint64_t bound) const {
  // Multiply-shift maps 64 random bits onto [0, bound) with a bias below bound / 2^64.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(context_.random()) * bound) >> 64);
}

int64_t Random::pick(const sdk::PickContext& ctx) {
  uint64_t total = cumulative_.empty() ? 0 : cumulative_.back();
  if (total == 0) return sdk::kPickNone;
  // Weight left after taking tried hosts out; when it is 0, every healthy host was tried.
  uint64_t untried = total;
  for (size_t i = 0; i < ctx.triedCount(); ++i) {
    uint32_t t = ctx.tried(i);
    // A repeated index must not count twice: only its first occurrence subtracts.
    bool first = true;
    for (size_t j = 0; j < i && first; ++j) first = ctx.tried(j) != t;
    if (first && t < weights_.size()) untried -= weights_[t];
  }
  if (untried == total || untried == 0) {
    uint64_t r = uniform(total);
    auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), r);
    return it - cumulative_.begin();
  }
  uint64_t r = uniform(untried);
  for (size_t i = 0; i < weights_.size(); ++i) {
    if (weights_[i] == 0 || ctx.wasTried(i)) continue;
    if (r < weights_[i]) return static_cast<int64_t>(i);
    r -= weights_[i];
  }
  return sdk::kPickNone;  // not reached: the untried weights sum to `untried`
}

}  // namespace sluice::balancers

SLUICE_BALANCER_PLUGIN("random", "1.0.0", sluice::balancers::RandomConfig,
                       sluice::balancers::Random)
