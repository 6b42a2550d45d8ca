// The discovery's own thread: a task queue with timers. Every piece of the running plugin
// (session, tree, publishing, self-registration) lives on this one thread, so none of them
// needs a lock; the ZooKeeper C client's threads (its I/O thread and its completion thread) only
// post() copies of what they received.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace sluice::zookeeper {

class Loop {
 public:
  using Clock = std::chrono::steady_clock;
  using Task = std::function<void()>;

  Loop() = default;
  ~Loop() { stop(); }
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  // Starts the thread. Call once.
  void start();
  // Any thread: runs `task` on the loop thread, after the tasks posted before it. Dropped after
  // stop().
  void post(Task task);
  // Any thread but the loop's: runs `task` on the loop thread and waits for it to finish.
  void runSync(const Task& task);
  // Loop thread: runs `task` at `when` (or soon after). Returns an id for cancel().
  uint64_t runAt(Clock::time_point when, Task task);
  uint64_t runAfter(std::chrono::milliseconds delay, Task task) {
    return runAt(Clock::now() + delay, std::move(task));
  }
  // Loop thread: forgets a timer that has not run yet (no-op otherwise).
  void cancel(uint64_t id);
  // Any thread but the loop's: finishes the running task, drops the rest, joins the thread.
  void stop();
  bool inLoopThread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void run();

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;  // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  // Timers: loop thread only.
  std::multimap<Clock::time_point, std::pair<uint64_t, Task>> timers_;
  uint64_t next_timer_ = 1;
};

}  // namespace sluice::zookeeper
