#include "balancers/random/random.h"

namespace sluice::balancers {

RandomConfig::RandomConfig(const sdk::ConfigNode& node) { node.requireOnlyKeys({}); }

void Random::onHostSet(const sdk::HostSet& hosts) { hosts_.assign(hosts); }

int64_t Random::pick(const sdk::PickContext& ctx) {
  if (!hosts_.anyHealthy()) return sdk::kPickNone;
  return hosts_.pickRandom(ctx, hosts_.avoidTried(ctx), context_.random());
}

}  // namespace sluice::balancers

SLUICE_BALANCER_PLUGIN("random", "1.0.0", sluice::balancers::RandomConfig,
                       sluice::balancers::Random)
