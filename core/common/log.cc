#include "core/common/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <string>

namespace sluice::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
thread_local std::string t_thread_name = "main";

const char* levelName(Level l) {
  switch (l) {
    case Level::kDebug:
      return "DEBUG";
    case Level::kInfo:
      return "INFO";
    case Level::kWarn:
      return "WARN";
    case Level::kError:
      return "ERROR";
    case Level::kOff:
      break;
  }
  return "OFF";
}

}  // namespace

void setLevel(Level l) { g_level.store(static_cast<int>(l), std::memory_order_relaxed); }

Level level() { return static_cast<Level>(g_level.load(std::memory_order_relaxed)); }

bool parseLevel(std::string_view text, Level* out) {
  static constexpr std::pair<std::string_view, Level> kNames[] = {
      {"debug", Level::kDebug}, {"info", Level::kInfo}, {"warn", Level::kWarn},
      {"error", Level::kError}, {"off", Level::kOff}};
  for (const auto& [name, l] : kNames) {
    if (text == name) {
      *out = l;
      return true;
    }
  }
  return false;
}

void setThreadName(std::string_view name) { t_thread_name = std::string(name); }

void write(Level l, std::string_view message) {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  tm utc{};
  gmtime_r(&tv.tv_sec, &utc);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &utc);
  char millis[8];
  snprintf(millis, sizeof(millis), ".%03dZ ", static_cast<int>(tv.tv_usec / 1000));
  std::string line;
  line.reserve(64 + message.size());
  line.append(stamp).append(millis).append(levelName(l)).append(" [").append(t_thread_name);
  line.append("] ").append(message).append("\n");
  // One write(2) per line keeps lines whole across threads.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace sluice::log
