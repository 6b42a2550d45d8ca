#include "discovery/zookeeper/loop.h"

#include <utility>

namespace sluice::zookeeper {

void Loop::start() {
  thread_ = std::thread([this] { run(); });
}

void Loop::post(Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void Loop::runSync(const Task& task) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  post([&] {
    task();
    std::lock_guard<std::mutex> lock(m);
    done = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(m);
  // A stopped loop drops the task: do not wait forever for it.
  while (!done) {
    {
      std::lock_guard<std::mutex> l(mutex_);
      if (stopping_) return;
    }
    cv.wait_for(lock, std::chrono::milliseconds(50));
  }
}

uint64_t Loop::runAt(Clock::time_point when, Task task) {
  uint64_t id = next_timer_++;
  timers_.emplace(when, std::make_pair(id, std::move(task)));
  return id;
}

void Loop::cancel(uint64_t id) {
  for (auto it = timers_.begin(); it != timers_.end(); ++it) {
    if (it->second.first == id) {
      timers_.erase(it);
      return;
    }
  }
}

void Loop::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    tasks_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable() && !inLoopThread()) thread_.join();
}

void Loop::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!tasks_.empty()) {
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      continue;
    }
    auto now = Clock::now();
    if (!timers_.empty() && timers_.begin()->first <= now) {
      Task task = std::move(timers_.begin()->second.second);
      timers_.erase(timers_.begin());
      lock.unlock();
      task();
      lock.lock();
      continue;
    }
    if (timers_.empty()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, timers_.begin()->first);
    }
  }
}

}  // namespace sluice::zookeeper
