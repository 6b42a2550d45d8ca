// A cluster's shared mutable state for retry budgets and circuit breakers: counts of what is in
// flight, summed over every worker. ClusterInfo is immutable config and is rebuilt when a
// reload changes a cluster's settings; this state is keyed by cluster name and lives as long as
// anything (a WorkerCluster, a connection) refers to it, so counts carry across reloads.
// Any thread: all counters are relaxed atomics (they gate admission, not memory).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace sluice::upstream {

class ClusterState {
 public:
  // The state of cluster `name` (created on first use). Main or worker thread; takes a lock:
  // call when a cluster or connection is set up, never per request.
  static std::shared_ptr<ClusterState> forCluster(const std::string& name);

  // Requests routed to the cluster and not yet finished (backoff and retries included).
  std::atomic<int64_t> active_requests{0};
  // Requests currently retrying: from the decision to retry (backoff included) until that
  // retry attempt ends.
  std::atomic<int64_t> active_retries{0};
  // Attempts waiting for a new upstream connection to open.
  std::atomic<int64_t> pending_requests{0};
  // Upstream connections open (busy or idle).
  std::atomic<int64_t> connections{0};

  // Takes one unit of `counter` unless it is at `limit` (0 = unlimited). True when taken.
  static bool tryAcquire(std::atomic<int64_t>& counter, uint32_t limit) {
    int64_t now = counter.fetch_add(1, std::memory_order_relaxed);
    if (limit != 0 && now >= static_cast<int64_t>(limit)) {
      counter.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  static void release(std::atomic<int64_t>& counter) {
    counter.fetch_sub(1, std::memory_order_relaxed);
  }
};

}  // namespace sluice::upstream
