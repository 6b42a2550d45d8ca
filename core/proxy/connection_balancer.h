// Spreading a listener's connections over the workers (listeners[].connection_balance).
//
// Each worker accepts from a listening socket of its own (SO_REUSEPORT, core/server/listen.h),
// and the kernel picks the socket by a hash of the client's address and port: it spreads a
// large number of connections evenly, but a few dozen long-lived ones land 31/19 or 34/16 as
// often as 25/25 (50 connections to two sockets, measured:
// docs/benchmarks/instructions.md). The busier worker then serves more than its share while the
// other idles, and its clients wait. With `exact`, a worker that holds more than kSlack connections
// over the least loaded worker hands a connection it has just accepted (nothing read yet) to that
// worker — Envoy's exact_balance, HAProxy's thread balancing on accept — so the spread stays within
// kSlack + 1.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace sluice::proxy {

class WorkerRuntime;

class ConnectionBalancer {
 public:
  // Runs `fn` on worker `worker`'s thread with its runtime (Server::postTo). Thread-safe.
  using PostFn = std::function<void(uint32_t worker, std::function<void(WorkerRuntime&)> fn)>;

  // How many connections a worker may hold over the least loaded one before it hands new ones
  // away. 1: the spread stays within 2, and a worker hands nothing away while connections come
  // and go one at a time (Connection: close traffic).
  static constexpr int64_t kSlack = 1;

  // `workers` >= 1. `post` reaches any worker's thread. Main thread.
  ConnectionBalancer(uint32_t workers, PostFn post);
  ConnectionBalancer(const ConnectionBalancer&) = delete;
  ConnectionBalancer& operator=(const ConnectionBalancer&) = delete;

  // The worker that should serve a connection worker `self` has just accepted: `self` unless it
  // holds more than kSlack connections over the least loaded worker, then that one, whose count
  // is raised by one at once (so that accepts racing on other workers see it). Any thread;
  // `self` < workers().
  uint32_t pick(uint32_t self);
  // Worker `worker` holds `connections` client connections now (after an accept, a hand-off
  // taken or a close). Worker `worker`'s thread.
  void update(uint32_t worker, size_t connections);
  // Runs `fn` on worker `worker` (see PostFn). Any thread.
  void post(uint32_t worker, std::function<void(WorkerRuntime&)> fn) const;
  uint32_t workers() const { return workers_; }
  // The count worker `worker` last reported plus hand-offs on their way to it (tests).
  int64_t count(uint32_t worker) const;

 private:
  struct alignas(64) Slot {  // one cache line per worker: updates do not contend
    std::atomic<int64_t> connections{0};
  };
  const uint32_t workers_;
  std::unique_ptr<Slot[]> slots_;
  PostFn post_;
};

}  // namespace sluice::proxy
