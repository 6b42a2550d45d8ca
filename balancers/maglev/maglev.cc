#include "balancers/maglev/maglev.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "balancers/ring_hash/murmur_hash.h"

namespace sluice::balancers {
namespace {

constexpr uint32_t kEmpty = UINT32_MAX;
constexpr uint64_t kOffsetSeed = 0x6f666673;  // "offs"
constexpr uint64_t kSkipSeed = 0x736b6970;    // "skip"
constexpr uint64_t kRehashes = 16;            // seeded rehashes before the linear walk

}  // namespace

bool isPrime(uint64_t n) {
  if (n < 2) return false;
  for (uint64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

MaglevConfig::MaglevConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"table_size"});
  table_size = node.getInt("table_size", 65537, 3, 5000011);
  if (!isPrime(table_size)) {
    node["table_size"].fail("table_size " + std::to_string(table_size) +
                            " is not a prime (try 65537, 131071 or 524287)");
  }
}

void Maglev::onHostSet(const sdk::HostSet& hosts) {
  // Health changes alone keep the table: it holds every host, healthy or not.
  if (hosts_.assignWithLayout(hosts)) buildTable();
}

void Maglev::buildTable() {
  const HostWeights::Layout& layout = hosts_.layout();
  table_.clear();
  if (layout.empty()) return;
  const uint64_t m = config_.table_size;
  struct Entry {
    uint32_t index;   // into the host set
    uint64_t weight;  // >= 1
    uint64_t slot;    // next preferred slot: offset + j * skip (mod m)
    uint64_t skip;    // 1 .. m - 1
    uint64_t target;  // grows by max_weight per claimed slot; claims in turns t * weight >= it
  };
  // The next slot of e's permutation: slot + skip (mod m), both below m.
  auto advance = [](Entry& e, uint64_t m) {
    e.slot += e.skip;
    if (e.slot >= m) e.slot -= m;
  };
  std::vector<uint32_t> order(layout.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&layout](uint32_t a, uint32_t b) { return layout[a].first < layout[b].first; });
  std::vector<Entry> entries;
  uint64_t max_weight = 0;
  uint64_t total_weight = 0;
  for (uint32_t i : order) {
    const std::string& address = layout[i].first;
    uint64_t weight = layout[i].second;
    entries.push_back({i, weight, murmurHash64A(address, kOffsetSeed) % m,
                       murmurHash64A(address, kSkipSeed) % (m - 1) + 1, 0});
    max_weight = std::max(max_weight, weight);
    total_weight += weight;
  }
  // Hosts claim in turn order, and within a turn in address order. Visiting every host in every
  // turn costs turns x hosts, mostly skips when one host is much heavier than the average (1000
  // hosts of weight 1 and one of 10000: 26 ms); then a min-heap of each host's next turn,
  // ceil(target / weight), gives the same claims in the same order in O(log hosts) each (2 ms),
  // though at about 3x the cost of the plain loop for even weights.
  auto claim = [&](Entry& e) {
    while (table_[e.slot] != kEmpty) advance(e, m);
    table_[e.slot] = e.index;
    advance(e, m);
    e.target += max_weight;
  };
  table_.assign(m, kEmpty);
  if (max_weight * entries.size() <= 64 * total_weight) {
    uint64_t filled = 0;
    for (uint64_t turn = 0; filled < m; ++turn) {
      for (size_t k = 0; k < entries.size() && filled < m; ++k) {
        if (turn * entries[k].weight < entries[k].target) continue;  // a lighter host waits
        claim(entries[k]);
        ++filled;
      }
    }
  } else {
    using Claim = std::pair<uint64_t, uint32_t>;  // (turn, position in entries)
    std::priority_queue<Claim, std::vector<Claim>, std::greater<Claim>> next;
    for (uint32_t k = 0; k < entries.size(); ++k) next.push({0, k});
    for (uint64_t filled = 0; filled < m; ++filled) {
      uint32_t k = next.top().second;
      next.pop();
      claim(entries[k]);
      next.push({(entries[k].target + entries[k].weight - 1) / entries[k].weight, k});
    }
  }
  uint64_t without_slot = 0;
  for (const Entry& e : entries) without_slot += e.target == 0 ? 1 : 0;
  if (without_slot > 0) {
    context_.host().log(sdk::LogLevel::kWarn,
                        "cluster " + context_.cluster() + ": " + std::to_string(without_slot) +
                            " hosts get no keys: more hosts than table_size " + std::to_string(m));
  }
}

int64_t Maglev::pick(const sdk::PickContext& ctx) {
  if (!hosts_.anyHealthy()) return sdk::kPickNone;
  const bool avoid_tried = hosts_.avoidTried(ctx);
  std::string_view key = ctx.hashKey();
  if (key.empty()) return hosts_.pickRandom(ctx, avoid_tried, context_.random());
  const uint64_t m = table_.size();
  uint64_t slot = 0;
  for (uint64_t seed = 0; seed <= kRehashes; ++seed) {
    slot = murmurHash64A(key, seed) % m;
    if (hosts_.eligible(table_[slot], ctx, avoid_tried)) return table_[slot];
  }
  for (uint64_t n = 1; n < m; ++n) {
    uint32_t host = table_[(slot + n) % m];
    if (hosts_.eligible(host, ctx, avoid_tried)) return host;
  }
  // Only a host without a slot (more hosts than slots) is eligible.
  return hosts_.pickRandom(ctx, avoid_tried, context_.random());
}

}  // namespace sluice::balancers

SLUICE_BALANCER_PLUGIN("maglev", "1.0.0", sluice::balancers::MaglevConfig,
                       sluice::balancers::Maglev)
