// Milliseconds as the timeval libevent takes for timeouts (event_add, evtimer_add).
#pragma once

#include <sys/time.h>

#include <cstdint>

namespace sluice::event {

inline timeval toTimeval(uint64_t ms) {
  return timeval{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
}

}  // namespace sluice::event
