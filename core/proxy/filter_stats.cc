#include "core/proxy/filter_stats.h"

#include "absl/container/flat_hash_map.h"

namespace sluice::proxy {
namespace {

struct Entry {
  std::weak_ptr<WorkerFilterChain> chain;  // tells a live chain from a new one at the same address
  std::shared_ptr<const FilterStatsList> stats;
};

absl::flat_hash_map<const WorkerFilterChain*, Entry>& cache() {
  thread_local absl::flat_hash_map<const WorkerFilterChain*, Entry> map;
  return map;
}

}  // namespace

std::shared_ptr<const FilterStatsList> filterStatsFor(
    const std::shared_ptr<WorkerFilterChain>& chain) {
  auto& map = cache();
  auto it = map.find(chain.get());
  if (it != map.end() && it->second.chain.lock() == chain) return it->second.stats;
  auto list = std::make_shared<FilterStatsList>();
  list->reserve(chain->size());
  for (size_t i = 0; i < chain->size(); ++i) {
    list->emplace_back(chain->info().config.name, chain->name(i));
  }
  if (map.size() >= 64) {  // chains replaced by reloads: forget the dead ones
    for (auto e = map.begin(); e != map.end();) {
      if (e->second.chain.expired()) {
        map.erase(e++);
      } else {
        ++e;
      }
    }
  }
  map[chain.get()] = Entry{chain, list};
  return list;
}

}  // namespace sluice::proxy
