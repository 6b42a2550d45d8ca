// The wait queue of a cluster with `max_requests_per_host`: requests that found every healthy
// host at the limit wait here, first in first out across all workers, and are dispatched by
// pull: whenever an attempt ends and frees a slot (on any worker), the oldest waiting request
// is handed its turn on its own worker, where it picks a host with room and takes the slot. A
// turn can lose the race for that slot (another worker's new request took it); the request then
// goes back to the head of the queue. One queue per cluster, kept by the ClusterManager next to
// the host table: it survives reloads that keep the cluster (waiting requests keep waiting) and
// is closed when the cluster is removed (waiting requests get 503).
//
// Liveness across threads: a waiting request is a WaitTicket, shared by the queue and the turn
// posted to its worker. The waiter pointer inside is only read or written on that worker, and a
// waiter that stops waiting (timed out, client gone, found a host) clears it there; a turn that
// arrives for a cleared ticket is dropped and passed on to the next request in the queue, so a
// freed slot is never lost and no thread touches a stream that ended.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "core/event/worker.h"
#include "core/stats/families.h"

namespace sluice::upstream {

class WaitTicket {
 public:
  class Waiter {
   public:
    // On the ticket's worker: the queue gives this request its turn — a host may have room now
    // (pick and reserve; go back to the head when the slot is gone) — or, with `closed`, the
    // cluster was removed. The ticket is spent either way: waiting again takes a new one.
    virtual void onQueueTurn(bool closed) = 0;

   protected:
    ~Waiter() = default;
  };

  // Made on `worker`'s thread by the request that waits; `waiter` must stay valid until it calls
  // cancel() or receives its turn.
  WaitTicket(event::Worker& worker, Waiter* waiter) : worker_(worker), waiter_(waiter) {}
  event::Worker& worker() const { return worker_; }
  // On the ticket's worker: the request stops waiting; a turn posted meanwhile is passed on.
  void cancel() { waiter_ = nullptr; }

 private:
  friend class WaitQueue;
  event::Worker& worker_;
  Waiter* waiter_;  // only on worker_'s thread
};

class WaitQueue : public std::enable_shared_from_this<WaitQueue> {
 public:
  // Metrics labeled {cluster} (stats::QueueStats). Main thread.
  explicit WaitQueue(const std::string& cluster);
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  enum class Push { kQueued, kFull, kClosed };
  // Any thread. Appends `ticket` unless `max` requests wait already (kFull; `max` 0 = no queue)
  // or the queue is closed. `at_head`: a request whose turn lost its slot goes back first; it
  // held a place, so the bound does not refuse it.
  Push push(std::shared_ptr<WaitTicket> ticket, size_t max, bool at_head = false);
  // Any thread. Takes `ticket` out; false when it is not queued (its turn may be on its way).
  bool remove(const WaitTicket* ticket);
  // Any thread: a slot was freed (or may be free). Hands the oldest waiting request its turn.
  // Cheap when nobody waits (one atomic load). Called after release(): the release and this
  // load, like a push and the pusher's freeSlots() check after it, are sequentially
  // consistent, so either the releaser sees the waiter or the waiter sees the free slot.
  void onSlotFreed() { wake(1); }
  // Any thread: up to `n` turns (a host set or limit change made room for several).
  void wake(size_t n);
  // Main thread: the cluster is gone. Every waiting request gets a closed turn (503); later
  // pushes are refused (kClosed).
  void close();

  size_t size() const { return size_.load(); }
  bool empty() const { return size() == 0; }
  const stats::QueueStats& stats() const { return stats_; }

 private:
  void post(std::shared_ptr<WaitTicket> ticket, bool closed);
  // On the ticket's worker.
  void deliver(const std::shared_ptr<WaitTicket>& ticket, bool closed);

  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<WaitTicket>> entries_;
  std::atomic<size_t> size_{0};
  bool closed_ = false;
  stats::QueueStats stats_;
};

}  // namespace sluice::upstream
