// basic_auth's password-verification threads: bcrypt and yescrypt take tens of milliseconds of
// CPU by design, which must not run on a worker's event loop (every other connection of that
// worker would wait). The filter pauses the request, a pool thread runs crypt, and the result
// comes back to the request's worker through StreamRef::post (ABI 1.2).
//
// Threads: submit() from any thread; jobs run on the pool's threads, each with its own libcrypt
// scratch space. Built with the config (main thread); the destructor (config_destroy, after every
// worker and request of that config ended) drops jobs not started and joins the threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "filters/basic_auth/htpasswd.h"

namespace sluice::filters::basic_auth {

class VerifyPool {
 public:
  using Job = std::function<void(Verifier&)>;

  // `threads` >= 1; at most `max_queue` jobs wait (beyond those running). Throws
  // std::system_error when a thread cannot be started.
  VerifyPool(size_t threads, size_t max_queue);
  ~VerifyPool();
  VerifyPool(const VerifyPool&) = delete;
  VerifyPool& operator=(const VerifyPool&) = delete;

  // Queues `job`; false (job dropped) when max_queue jobs already wait.
  bool submit(Job job);

 private:
  void run();

  const size_t max_queue_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sluice::filters::basic_auth
