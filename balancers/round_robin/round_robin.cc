#include "balancers/round_robin/round_robin.h"

#include <string_view>
#include <unordered_map>
#include <utility>

namespace sluice::balancers {

RoundRobinConfig::RoundRobinConfig(const sdk::ConfigNode& node) { node.requireOnlyKeys({}); }

void RoundRobin::onHostSet(const sdk::HostSet& hosts) {
  // Carry each remaining host's schedule position over, keyed by address.
  std::unordered_map<std::string_view, int64_t> previous;
  for (const Peer& p : peers_) previous.emplace(p.address, p.current);
  std::vector<Peer> next(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    sdk::HostEntry h = hosts[i];
    next[i].address = std::string(h.address());
    next[i].weight = h.weight() > 0 ? h.weight() : 1;
    next[i].healthy = h.healthy();
    auto it = previous.find(h.address());
    if (it != previous.end()) {
      next[i].current = it->second;
      previous.erase(it);  // a duplicated address carries over once
    }
  }
  peers_ = std::move(next);
  if (stagger_ > 0 && !peers_.empty()) {
    int64_t total = 0;
    for (const Peer& p : peers_) total += p.weight;
    uint32_t skip = static_cast<uint32_t>(stagger_ % total);
    stagger_ = 0;
    sluice_pick_context empty{};
    empty.struct_size = sizeof(empty);
    sdk::PickContext none(&empty);
    for (uint32_t i = 0; i < skip; ++i) pick(none);
  }
}

int64_t RoundRobin::pick(const sdk::PickContext& ctx) {
  // Avoid hosts already tried unless every healthy host was tried.
  bool avoid_tried = false;
  if (ctx.triedCount() > 0) {
    for (size_t i = 0; i < peers_.size() && !avoid_tried; ++i) {
      avoid_tried = peers_[i].healthy && !ctx.wasTried(i);
    }
  }
  int64_t best = -1;
  int64_t total = 0;
  for (size_t i = 0; i < peers_.size(); ++i) {
    Peer& p = peers_[i];
    if (!p.healthy || (avoid_tried && ctx.wasTried(i))) continue;
    p.current += p.weight;
    total += p.weight;
    // Ties go to the smaller address, so the schedule does not depend on the set's order.
    if (best < 0 || p.current > peers_[best].current ||
        (p.current == peers_[best].current && p.address < peers_[best].address)) {
      best = static_cast<int64_t>(i);
    }
  }
  if (best < 0) return sdk::kPickNone;
  peers_[best].current -= total;
  return best;
}

}  // namespace sluice::balancers

SLUICE_BALANCER_PLUGIN("round_robin", "1.0.0", sluice::balancers::RoundRobinConfig,
                       sluice::balancers::RoundRobin)
