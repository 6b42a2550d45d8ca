#include "core/upstream/host_limit.h"

#include <algorithm>

namespace sluice::upstream {
namespace {

bool healthyAt(const HostSet& hosts, size_t i) { return hosts.cView()->hosts[i].healthy != 0; }

bool contains(const std::vector<uint32_t>& v, uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

bool tryReserve(Host& host, uint32_t limit) {
  std::atomic<uint32_t>& active = host.activeRequests();
  if (limit == 0) {
    active.fetch_add(1);
    return true;
  }
  uint32_t now = active.load();
  while (now < limit) {
    if (active.compare_exchange_weak(now, now + 1)) return true;
  }
  return false;
}

// Sequentially consistent on purpose: a release followed by WaitQueue::empty() and a waiter's
// push followed by freeSlots() must not both miss each other (see WaitQueue::onSlotFreed).
void release(Host& host) { host.activeRequests().fetch_sub(1); }

size_t freeSlots(const HostSet& hosts, uint32_t limit) {
  size_t free = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (!healthyAt(hosts, i)) continue;
    if (limit == 0) return SIZE_MAX;
    uint32_t active = hosts.at(i).host->activeRequests().load();
    if (active < limit) free += limit - active;
  }
  return free;
}

RoomPick pickWithRoom(const HostSet& hosts, uint32_t limit, const sluice_pick_context& ctx,
                      const std::function<int64_t(const sluice_pick_context&)>& pick) {
  RoomPick out;
  if (limit == 0) {
    out.index = pick(ctx);
    if (out.index >= 0) tryReserve(*hosts.at(static_cast<size_t>(out.index)).host, 0);
    return out;
  }
  std::vector<uint32_t> excluded(ctx.tried, ctx.tried + ctx.tried_count);
  std::vector<uint32_t> full;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (hosts.at(i).host->activeRequests().load() >= limit) {
      full.push_back(static_cast<uint32_t>(i));
      if (!contains(excluded, static_cast<uint32_t>(i))) {
        excluded.push_back(static_cast<uint32_t>(i));
      }
    }
  }
  // One more round than there are hosts: each failed round excludes one more host.
  for (size_t round = 0; round <= hosts.size() && full.size() < hosts.size(); ++round) {
    sluice_pick_context c = ctx;
    c.tried = excluded.data();
    c.tried_count = excluded.size();
    int64_t i = pick(c);
    if (i < 0 || static_cast<size_t>(i) >= hosts.size()) break;
    uint32_t u = static_cast<uint32_t>(i);
    if (contains(full, u)) break;  // only full hosts left in the balancer's eyes
    if (tryReserve(*hosts.at(u).host, limit)) {
      out.index = i;
      return out;
    }
    full.push_back(u);  // another worker took its last slot
    if (!contains(excluded, u)) excluded.push_back(u);
  }
  // The balancer gave nothing with room (it avoided the hosts this request tried, or returned
  // only full ones). A healthy host with room still beats waiting beside a free slot: the least
  // loaded one. (This also keeps WaitQueue's wake-up rule, freeSlots() > 0, exact.)
  for (;;) {
    int64_t best = -1;
    uint32_t best_active = 0;
    bool any_healthy = false;
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!healthyAt(hosts, i)) continue;
      any_healthy = true;
      uint32_t active = hosts.at(i).host->activeRequests().load();
      if (active >= limit) continue;
      if (best < 0 || active < best_active) {
        best = static_cast<int64_t>(i);
        best_active = active;
      }
    }
    if (best < 0) {
      bool any_full_healthy = false;
      for (uint32_t f : full) any_full_healthy = any_full_healthy || healthyAt(hosts, f);
      out.full = any_healthy && any_full_healthy;
      return out;
    }
    if (tryReserve(*hosts.at(static_cast<size_t>(best)).host, limit)) {
      out.index = best;
      return out;
    }
  }
}

}  // namespace sluice::upstream
