#include "balancers/p2c/p2c.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace sluice::balancers {

P2cConfig::P2cConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"latency_aware", "decay_ms", "failure_penalty_ms"});
  latency_aware = node.getBool("latency_aware", latency_aware);
  decay_us = static_cast<uint64_t>(node.getInt("decay_ms", 10000, 1, 3600000)) * 1000;
  failure_penalty_us =
      static_cast<uint64_t>(node.getInt("failure_penalty_ms", 1000, 0, 3600000)) * 1000;
}

void P2c::onHostSet(const sdk::HostSet& hosts) {
  // Carry each staying host's EWMA over, keyed by address.
  std::unordered_map<std::string_view, const PeakEwma*> previous;
  for (const Peer& p : peers_) previous.emplace(p.address, &p.ewma);
  std::vector<Peer> next(hosts.size());
  cumulative_.assign(hosts.size(), 0);
  uint64_t sum = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    sdk::HostEntry h = hosts[i];
    next[i].address = std::string(h.address());
    next[i].weight = h.healthy() ? std::max<uint32_t>(h.weight(), 1) : 0;
    auto it = previous.find(h.address());
    if (it != previous.end()) next[i].ewma = *it->second;
    sum += next[i].weight;
    cumulative_[i] = sum;
  }
  peers_ = std::move(next);
  hosts_.emplace(hosts);
  size_t healthy = 0;
  for (const Peer& p : peers_) healthy += p.weight != 0 ? 1 : 0;
  one_request_ = sum == 0 ? 0 : static_cast<double>(healthy) / static_cast<double>(sum);
}

uint64_t P2c::uniform(uint64_t bound) const {
  // Multiply-shift maps 64 random bits onto [0, bound) with a bias below bound / 2^64.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(context_.random()) * bound) >> 64);
}

int64_t P2c::pick(const sdk::PickContext& ctx) {
  uint64_t total = cumulative_.empty() ? 0 : cumulative_.back();
  if (total == 0) return sdk::kPickNone;
  bool avoid_tried = false;
  if (ctx.triedCount() > 0) {
    for (size_t i = 0; i < peers_.size() && !avoid_tried; ++i) {
      avoid_tried = peers_[i].weight != 0 && !ctx.wasTried(i);
    }
  }
  int64_t a = -1;
  int64_t b = -1;
  if (avoid_tried) {
    drawUntried(ctx, &a, &b);
  } else {
    // First draw over all healthy weight; the second over the rest, skipping a's range.
    uint64_t r = uniform(total);
    a = std::upper_bound(cumulative_.begin(), cumulative_.end(), r) - cumulative_.begin();
    uint64_t weight_a = peers_[a].weight;
    if (total > weight_a) {
      uint64_t r2 = uniform(total - weight_a);
      if (r2 >= cumulative_[a] - weight_a) r2 += weight_a;
      b = std::upper_bound(cumulative_.begin(), cumulative_.end(), r2) - cumulative_.begin();
    }
  }
  if (a < 0) return sdk::kPickNone;
  return b < 0 ? a : lessLoaded(a, b);
}

void P2c::drawUntried(const sdk::PickContext& ctx, int64_t* a, int64_t* b) {
  uint64_t untried = 0;
  for (size_t i = 0; i < peers_.size(); ++i) {
    if (!ctx.wasTried(i)) untried += peers_[i].weight;
  }
  for (int64_t* out : {a, b}) {
    uint64_t left = untried - (*a >= 0 ? peers_[*a].weight : 0);
    if (left == 0) return;
    uint64_t r = uniform(left);
    for (size_t i = 0; i < peers_.size(); ++i) {
      uint64_t w = peers_[i].weight;
      if (w == 0 || ctx.wasTried(i) || static_cast<int64_t>(i) == *a) continue;
      if (r < w) {
        *out = static_cast<int64_t>(i);
        break;
      }
      r -= w;
    }
  }
}

double P2c::latencyLoad(size_t i, uint64_t now_us) const {
  double active = hosts_->activeRequests(i);
  // No sample yet: free while idle, the failure penalty per request while busy.
  double latency = peers_[i].ewma.sampled()
                       ? peers_[i].ewma.value(now_us, static_cast<double>(config_.decay_us))
                       : (active == 0 ? 0 : static_cast<double>(config_.failure_penalty_us));
  return latency * (active / peers_[i].weight + one_request_);
}

int64_t P2c::lessLoaded(int64_t a, int64_t b) const {
  if (config_.latency_aware) {
    uint64_t now = context_.host().nowUs();
    return latencyLoad(b, now) < latencyLoad(a, now) ? b : a;
  }
  // active_b / weight_b < active_a / weight_a, in integers (both factors < 2^32).
  uint64_t lhs = static_cast<uint64_t>(hosts_->activeRequests(b)) * peers_[a].weight;
  uint64_t rhs = static_cast<uint64_t>(hosts_->activeRequests(a)) * peers_[b].weight;
  return lhs < rhs ? b : a;
}

void P2c::onResult(uint32_t index, sdk::Outcome outcome, uint64_t latency_us) {
  if (!config_.latency_aware || index >= peers_.size()) return;
  if (outcome == sdk::Outcome::kCancelled) return;  // the client left: says nothing of the host
  double sample = static_cast<double>(latency_us);
  if (outcome != sdk::Outcome::kSuccess) {
    sample = std::max(sample, static_cast<double>(config_.failure_penalty_us));
  }
  peers_[index].ewma.observe(sample, context_.host().nowUs(),
                             static_cast<double>(config_.decay_us));
}

}  // namespace sluice::balancers

SLUICE_BALANCER_PLUGIN("p2c", "1.0.0", sluice::balancers::P2cConfig, sluice::balancers::P2c)
