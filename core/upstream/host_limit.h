// The per-host concurrency limit of a cluster (`max_requests_per_host`): slots are taken on
// Host::activeRequests(), the count shared by every worker, with a compare-and-swap so two
// workers never both take a host's last slot; and the pick offers the balancer only hosts with
// room. Any thread (pickWithRoom: the worker that owns `pick`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/api/balancer.h"
#include "core/upstream/host.h"

namespace sluice::upstream {

// Takes one in-flight slot on `host` if it has fewer than `limit` requests in flight over all
// workers; `limit` 0 = no limit (always takes one). True when the slot was taken.
bool tryReserve(Host& host, uint32_t limit);
// Gives a slot taken by tryReserve back.
void release(Host& host);

// Free slots on the healthy hosts of `hosts` (what a balancer may pick): the sum of
// limit - in-flight over hosts below `limit`. SIZE_MAX when `limit` is 0 and a healthy host
// exists.
size_t freeSlots(const HostSet& hosts, uint32_t limit);

struct RoomPick {
  int64_t index = -1;  // into `hosts`, its slot reserved; -1 = none
  bool full = false;   // with index -1: a healthy host exists but every one is at the limit
};

// Picks a host that has room and reserves its slot. `pick` asks the balancer (it sees
// ctx.tried extended with the hosts at the limit, so it is only offered hosts with room; when it
// still returns a full host, or loses the last slot to another worker, that host joins the
// exclusions and the balancer is asked again). When the balancer finds nothing with room but a
// healthy host has room (one this request tried before, say), the least loaded such host is
// used: a request never waits beside a free slot. `limit` 0: exactly one pick, no exclusions
// added, the slot counted — the behaviour without a limit.
RoomPick pickWithRoom(const HostSet& hosts, uint32_t limit, const sluice_pick_context& ctx,
                      const std::function<int64_t(const sluice_pick_context&)>& pick);

}  // namespace sluice::upstream
