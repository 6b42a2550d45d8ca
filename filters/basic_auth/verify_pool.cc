#include "filters/basic_auth/verify_pool.h"

#include <utility>

namespace sluice::filters::basic_auth {

VerifyPool::VerifyPool(size_t threads, size_t max_queue) : max_queue_(max_queue) {
  try {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    throw;
  }
}

VerifyPool::~VerifyPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool VerifyPool::submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= max_queue_) return false;
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void VerifyPool::run() {
  Verifier verifier;  // this thread's crypt_data
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      job(verifier);
    } catch (...) {
      // A job reports through its own post; nothing may escape a thread.
    }
  }
}

}  // namespace sluice::filters::basic_auth
