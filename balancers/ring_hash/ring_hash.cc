#include "balancers/ring_hash/ring_hash.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "balancers/ring_hash/murmur_hash.h"

namespace sluice::balancers {

namespace {
constexpr int64_t kMaxRingSize = 8388608;
}  // namespace

RingHashConfig::RingHashConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"min_ring_size", "max_ring_size"});
  min_ring_size = node.getInt("min_ring_size", 1024, 1, kMaxRingSize);
  max_ring_size = node.getInt("max_ring_size", kMaxRingSize, 1, kMaxRingSize);
  if (max_ring_size < min_ring_size) {
    sdk::ConfigNode at = node.has("max_ring_size") ? node["max_ring_size"] : node["min_ring_size"];
    at.fail("max_ring_size (" + std::to_string(max_ring_size) + ") is below min_ring_size (" +
            std::to_string(min_ring_size) + ")");
  }
}

void RingHash::onHostSet(const sdk::HostSet& hosts) {
  // Health changes alone keep the ring: it holds every host, healthy or not.
  if (hosts_.assignWithLayout(hosts)) buildRing();
}

void RingHash::buildRing() {
  const HostWeights::Layout& layout = hosts_.layout();
  ring_hashes_.clear();
  ring_hosts_.clear();
  points_per_weight_ = 0;
  uint64_t total = 0;
  for (const auto& host : layout) total += host.second;
  if (total == 0) return;
  uint64_t r = 1;
  while (r * total < config_.min_ring_size) r <<= 1;
  while (r > 1 && r * total > config_.max_ring_size) r >>= 1;
  if (r * total <= config_.max_ring_size) points_per_weight_ = r;

  std::vector<std::pair<uint64_t, uint32_t>> points;  // (hash, host index)
  points.reserve(points_per_weight_ != 0 ? r * total : config_.max_ring_size + layout.size());
  std::string key;
  for (size_t i = 0; i < layout.size(); ++i) {
    uint64_t weight = layout[i].second;
    uint64_t count = points_per_weight_ != 0
                         ? r * weight
                         : std::max<uint64_t>(1, weight * config_.max_ring_size / total);
    key = layout[i].first + "_";
    size_t base = key.size();
    for (uint64_t j = 0; j < count; ++j) {
      key.resize(base);
      key += std::to_string(j);
      points.emplace_back(murmurHash64A(key, 0), static_cast<uint32_t>(i));
    }
  }
  // Equal hashes (rare) are ordered by address, so the ring never depends on the set's order.
  std::sort(points.begin(), points.end(), [&layout](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : layout[a.second].first < layout[b.second].first;
  });
  ring_hashes_.reserve(points.size());
  ring_hosts_.reserve(points.size());
  for (const auto& p : points) {
    ring_hashes_.push_back(p.first);
    ring_hosts_.push_back(p.second);
  }
}

int64_t RingHash::pick(const sdk::PickContext& ctx) {
  if (!hosts_.anyHealthy()) return sdk::kPickNone;
  const bool avoid_tried = hosts_.avoidTried(ctx);
  std::string_view key = ctx.hashKey();
  if (key.empty()) return hosts_.pickRandom(ctx, avoid_tried, context_.random());
  uint64_t h = murmurHash64A(key, 0);
  size_t pos = std::lower_bound(ring_hashes_.begin(), ring_hashes_.end(), h) - ring_hashes_.begin();
  // Clockwise from the key's point to the first eligible host; one lap at most.
  for (size_t n = 0; n < ring_hosts_.size(); ++n, ++pos) {
    if (pos == ring_hosts_.size()) pos = 0;
    if (hosts_.eligible(ring_hosts_[pos], ctx, avoid_tried)) return ring_hosts_[pos];
  }
  return sdk::kPickNone;  // not reached: every host has at least one point
}

}  // namespace sluice::balancers

SLUICE_BALANCER_PLUGIN("ring_hash", "1.0.0", sluice::balancers::RingHashConfig,
                       sluice::balancers::RingHash)
