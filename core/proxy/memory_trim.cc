#include "core/proxy/memory_trim.h"

#include <malloc.h>

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

void MemoryTrim::onTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<MemoryTrim*>(arg);
  self->armed_ = false;
  malloc_trim(0);
  ++self->trims_;
  // The next burst is measured from what is open now.
  self->peak_ = 0;
}

}  // namespace sluice::proxy
