// Milliseconds (or microseconds) as the timeval libevent takes for timeouts (event_add,
// evtimer_add).
#pragma once

#include <sys/time.h>

#include <cstdint>

namespace sluice::event {

inline timeval toTimeval(uint64_t ms) {
  return timeval{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
}

inline timeval toTimevalUs(uint64_t us) {
  return timeval{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
}

}  // namespace sluice::event
