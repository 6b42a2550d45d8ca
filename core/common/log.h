// Leveled logging to stderr: "2026-11-29T19:40:01.123Z WARN [worker 1] message".
// Thread-safe (one write(2) per line). The level is process-wide and set once at start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace sluice::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// Sets the minimum level written. Call before starting threads.
void setLevel(Level level);
Level level();
// Parses "debug" | "info" | "warn" | "error" | "off"; false for anything else.
bool parseLevel(std::string_view text, Level* out);
// Names the calling thread in log lines ("main", "worker 3").
void setThreadName(std::string_view name);
// Writes one line at `level` (no check of the level: use the macros).
void write(Level level, std::string_view message);

inline bool enabled(Level l) { return static_cast<int>(l) >= static_cast<int>(level()); }

namespace detail {
// absl::StrCat pieces; Debian's abseil has its own string_view, so std::string_view is bridged.
template <typename T>
const T& piece(const T& v) {
  return v;
}
inline absl::string_view piece(std::string_view v) { return absl::string_view(v.data(), v.size()); }
}  // namespace detail

// Concatenates anything absl::StrCat takes, plus std::string_view.
template <typename... A>
std::string cat(const A&... a) {
  return absl::StrCat(detail::piece(a)...);
}

// For a warning that can repeat on every request or every probe: at most one line per
// interval, carrying the count of the lines left out since the previous one. Not thread-safe:
// one per owner thread (a thread_local, or state only one thread touches).
class Throttle {
 public:
  // True when a line may be written at `now` (same unit as `interval`, a steady clock that is
  // never 0); *skipped then gets how many calls were refused since the last line. False: this
  // call is counted as left out.
  bool allow(uint64_t now, uint64_t interval, uint64_t* skipped) {
    if (last_ != 0 && now - last_ < interval) {
      ++skipped_;
      return false;
    }
    last_ = now;
    *skipped = skipped_;
    skipped_ = 0;
    return true;
  }

 private:
  uint64_t last_ = 0;  // when the last line was allowed; 0 = none yet
  uint64_t skipped_ = 0;
};

}  // namespace sluice::log

// Usage: SLUICE_LOG(kWarn, "upstream ", addr, " reset"). Arguments are absl::StrCat pieces and are
// evaluated only when the level is enabled.
#define SLUICE_LOG(lvl, ...)                                                            \
  do {                                                                                  \
    if (::sluice::log::enabled(::sluice::log::Level::lvl)) {                            \
      ::sluice::log::write(::sluice::log::Level::lvl, ::sluice::log::cat(__VA_ARGS__)); \
    }                                                                                   \
  } while (0)
