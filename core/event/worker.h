// A worker thread: its own event_base, its own listening sockets (SO_REUSEPORT), its own
// upstream connection pools and plugin instances. Nothing on the request path takes a lock;
// the only way in from another thread is post().
#pragma once

#include <event2/event.h>

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
  std::vector<std::unique_ptr<Deletable>> deleting_;  // the batch being deleted
  std::thread thread_;
  uint64_t rng_[4];
};

}  // namespace sluice::event
