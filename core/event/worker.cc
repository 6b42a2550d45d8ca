#include "core/event/worker.h"

#include <sys/random.h>

#include <cstring>

#include "core/common/log.h"

namespace sluice::event {
namespace {

thread_local Worker* t_current = nullptr;

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// The worker's loop keeps libevent's default clock, CLOCK_MONOTONIC_COARSE (a jiffy: 4 ms on a
// 250 Hz kernel), and epoll_wait's millisecond timeout. EVENT_BASE_FLAG_PRECISE_TIMER would
// read CLOCK_MONOTONIC but, on epoll, also arm a timerfd before every epoll_wait: one more
// system call per loop turn (measured: 0.11 per proxied request at 50 connections over two
// workers, 0.5 at 4 connections; nginx and HAProxy make none). So a libevent timeout may end up
// to a jiffy before its delay has passed by CLOCK_MONOTONIC, the clock of the streams' times and
// Host::nowUs. Timers that promise "not before" check that clock when they fire and wait for
// the rest: filter timers (timer_arm, core/api/filter.h), the request deadline, the transport's
// read timeout. The others (health check intervals, queue timeouts, drain) may end a jiffy early.
event_base* newWorkerBase() { return event_base_new(); }

}  // namespace

Worker::Worker(uint32_t index)
    : index_(index),
      base_(newWorkerBase()),
      notifier_(std::make_unique<Notifier>(base_, [this] { runPosted(); })),
      // Only ever activated: EV_PERSIST spares libevent an event_del per activation.
      delete_event_(event_new(base_, -1, EV_PERSIST, &Worker::onDeferredDelete, this)) {
  if (getrandom(rng_, sizeof(rng_), 0) != static_cast<ssize_t>(sizeof(rng_))) {
    for (int i = 0; i < 4; ++i) rng_[i] = 0x9E3779B97F4A7C15ULL * (index + i + 1);
  }
}

Worker::~Worker() {
  if (thread_.joinable()) {
    stop();
    join();
  }
  to_delete_.clear();
  deleting_.clear();
  notifier_.reset();
  event_free(delete_event_);
  event_base_free(base_);
}

void Worker::start(std::function<void()> init) {
  thread_ = std::thread([this, init = std::move(init)] {
    t_current = this;
    log::setThreadName("worker " + std::to_string(index_));
    init();
    event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY);
    to_delete_.clear();
    t_current = nullptr;
  });
}

void Worker::post(std::function<void()> fn) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    was_empty = posted_.empty();
    posted_.push_back(std::move(fn));
  }
  if (was_empty) notifier_->notify();  // a non-empty queue has a wake-up on its way
}

void Worker::stop() {
  // Without libevent's locking, the loop is stopped from its own thread.
  post([this] { event_base_loopbreak(base_); });
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::deferDelete(std::unique_ptr<Deletable> obj) {
  if (obj == nullptr) return;
  to_delete_.push_back(std::move(obj));
  // Inside a transport callback on this worker's thread, the callback's end deletes it.
  if (transport_callback_depth == 0 || t_current != this) event_active(delete_event_, 0, 0);
}

thread_local int Worker::transport_callback_depth = 0;

void Worker::deleteDeferred() {
  // Deleting may defer more objects; loop until quiet. Both vectors keep their capacity (no
  // allocation per deferred delete).
  while (!to_delete_.empty()) {
    deleting_.swap(to_delete_);
    deleting_.clear();
  }
}

uint64_t Worker::random() {
  const uint64_t result = rotl(rng_[1] * 5, 7) * 9;
  const uint64_t t = rng_[1] << 17;
  rng_[2] ^= rng_[0];
  rng_[3] ^= rng_[1];
  rng_[1] ^= rng_[2];
  rng_[0] ^= rng_[3];
  rng_[2] ^= t;
  rng_[3] = rotl(rng_[3], 45);
  return result;
}

Worker* Worker::current() { return t_current; }

void Worker::runPosted() {
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(posted_);
  }
  for (auto& fn : batch) fn();
}

void Worker::onDeferredDelete(evutil_socket_t, short, void* arg) {
  static_cast<Worker*>(arg)->deleteDeferred();
}

}  // namespace sluice::event
