#include "core/plugin/host_api.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

#include "core/common/log.h"
#include "core/plugin/plugin.h"

namespace sluice::plugin {
namespace {

std::atomic<sluice_log_level> min_level{SLUICE_LOG_INFO};

log::Level coreLevel(sluice_log_level level) {
  switch (level) {
    case SLUICE_LOG_DEBUG:
      return log::Level::kDebug;
    case SLUICE_LOG_INFO:
      return log::Level::kInfo;
    case SLUICE_LOG_WARN:
      return log::Level::kWarn;
    default:
      return log::Level::kError;  // unknown levels are shown, as errors
  }
}

}  // namespace

void setPluginLogLevel(sluice_log_level level) { min_level.store(level); }

void hostLog(const void* ctx, sluice_log_level level, const char* msg, size_t len) {
  if (level < min_level.load(std::memory_order_relaxed)) return;
  const auto* library = static_cast<const Library*>(ctx);
  std::string line = "[plugin ";
  line += library != nullptr ? library->name() : "?";
  line += "] ";
  // A plugin's message stays on one line: CR/LF and other control bytes become spaces.
  for (size_t i = 0; msg != nullptr && i < len; ++i) {
    unsigned char c = static_cast<unsigned char>(msg[i]);
    line += c < 0x20 && c != '\t' ? ' ' : msg[i];
  }
  // Through the core's log: same timestamp, level and thread tag as every other line.
  log::write(coreLevel(level), line);
}

uint64_t hostNowUs() {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
}

}  // namespace sluice::plugin
