// A worker thread: its own event_base, its own listening sockets (SO_REUSEPORT), its own
// upstream connection pools and plugin instances. Nothing on the request path takes a lock;
// the only way in from another thread is post().
#pragma once

#include <event2/event.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/event/notifier.h"

namespace sluice::event {

// Something whose destruction must wait until the current callback stack has unwound.
class Deletable {
 public:
  virtual ~Deletable() = default;
};

// Counters one worker updates without atomics' contention (only this worker writes; the admin
// reads with relaxed loads). Names follow Envoy's stats where one exists.
struct WorkerStats {
  std::atomic<uint64_t> downstream_cx_total{0};
  std::atomic<uint64_t> downstream_cx_active{0};
  std::atomic<uint64_t> downstream_rq_total{0};
  std::atomic<uint64_t> downstream_rq_1xx{0};
  std::atomic<uint64_t> downstream_rq_2xx{0};
  std::atomic<uint64_t> downstream_rq_3xx{0};
  std::atomic<uint64_t> downstream_rq_4xx{0};
  std::atomic<uint64_t> downstream_rq_5xx{0};
  std::atomic<uint64_t> downstream_rq_bad{0};  // refused by the codec (400/413/414/431/505)
  std::atomic<uint64_t> upstream_cx_total{0};
  std::atomic<uint64_t> upstream_cx_connect_fail{0};
  std::atomic<uint64_t> upstream_cx_reused{0};
  std::atomic<uint64_t> upstream_rq_timeout{0};
  std::atomic<uint64_t> upstream_rq_retry{0};
  std::atomic<uint64_t> upstream_rq_reset{0};
  // Upgraded connections (101 Switching Protocols) tunnelling bytes: open now / ever opened.
  std::atomic<uint64_t> tunnels_active{0};
  std::atomic<uint64_t> tunnels_total{0};
  // Downstream TLS handshakes: completed (full / resumed) and failed by reason (the index is
  // tls::HandshakeFailure; tls::failureLabel names it).
  static constexpr int kTlsFailureReasons = 8;
  std::atomic<uint64_t> tls_handshakes_full{0};
  std::atomic<uint64_t> tls_handshakes_resumed{0};
  std::atomic<uint64_t> tls_handshakes_failed[kTlsFailureReasons] = {};

  static void inc(std::atomic<uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  static void dec(std::atomic<uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }
};

class Worker {
 public:
  // `index` is 0-based. The event_base is created here (on the calling thread) so setup code
  // can add events before start().
  explicit Worker(uint32_t index);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts the thread; `init` runs first on it, then the loop runs until stop() or until the
  // loop has no events left.
  void start(std::function<void()> init);
  // Runs `fn` on the worker thread, soon. Thread-safe. Functions run in posting order.
  void post(std::function<void()> fn);
  // Breaks the loop (thread-safe); join() then returns.
  void stop();
  void join();

  uint32_t index() const { return index_; }
  event_base* base() const { return base_; }
  WorkerStats& stats() { return stats_; }
  const WorkerStats& stats() const { return stats_; }
  // True on this worker's own thread.
  bool isCurrentThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  // Destroys `obj` after the current event callback returns. Worker thread only.
  void deferDelete(std::unique_ptr<Deletable> obj);

  // A uniformly random 64-bit number from this worker's own generator (xoshiro256**), seeded
  // from the OS. Worker thread only.
  uint64_t random();
  // The worker whose thread is calling, or nullptr on other threads.
  static Worker* current();

 private:
  void runPosted();
  static void onDeferredDelete(evutil_socket_t, short, void* arg);

  uint32_t index_;
  event_base* base_;
  std::unique_ptr<Notifier> notifier_;  // wakes the loop for post()
  ::event* delete_event_;               // same-thread: event_active is enough
  std::mutex mutex_;
  std::vector<std::function<void()>> posted_;
  std::vector<std::unique_ptr<Deletable>> to_delete_;
  std::thread thread_;
  WorkerStats stats_;
  uint64_t rng_[4];
};

}  // namespace sluice::event
