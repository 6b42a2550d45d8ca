#include "core/proxy/memory_trim.h"

#include <malloc.h>

#include <ctime>

namespace sluice::proxy {

MemoryTrim::MemoryTrim(event_base* base) : timer_(evtimer_new(base, &MemoryTrim::onTimer, this)) {}

MemoryTrim::~MemoryTrim() {
  if (timer_ != nullptr) event_free(timer_);
}

void MemoryTrim::onConnectionCount(size_t count) {
  if (count > peak_) {
    peak_ = count;
    return;
  }
  if (armed_ || timer_ == nullptr || peak_ - count < kMinDrop || count > peak_ / 4) return;
  armed_ = true;
  timeval delay{kDelayMs / 1000, (kDelayMs % 1000) * 1000};
  evtimer_add(timer_, &delay);
}

uint64_t MemoryTrim::nowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

void MemoryTrim::onParked() {
  if (++parked_ < kMinDrop || timer_ == nullptr) return;
  if (last_trim_ms_ != 0 && nowMs() - last_trim_ms_ < kParkTrimIntervalMs) return;
  // Debounced: kDelayMs after the last of a run of parks (re-armed every 64th), so that it runs
  // once the idle clients have settled.
  if (armed_ && parked_ % 64 != 0) return;
  armed_ = true;
  timeval delay{kDelayMs / 1000, (kDelayMs % 1000) * 1000};
  evtimer_add(timer_, &delay);
}

void MemoryTrim::trimNow() {
  if (armed_ && timer_ != nullptr) evtimer_del(timer_);
  armed_ = false;
  malloc_trim(0);
  ++trims_;
  // The next burst is measured from what is open now.
  peak_ = 0;
  parked_ = 0;
  last_trim_ms_ = nowMs();
}

void MemoryTrim::onTimer(evutil_socket_t, short, void* arg) {
  static_cast<MemoryTrim*>(arg)->trimNow();
}

}  // namespace sluice::proxy
