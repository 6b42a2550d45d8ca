#include "core/plugin/host_api.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

#include "core/plugin/plugin.h"

namespace sluice::plugin {
namespace {

std::atomic<sluice_log_level> min_level{SLUICE_LOG_INFO};

const char* levelName(sluice_log_level level) {
  switch (level) {
    case SLUICE_LOG_DEBUG:
      return "DEBUG";
    case SLUICE_LOG_INFO:
      return "INFO";
    case SLUICE_LOG_WARN:
      return "WARN";
    default:
      return "ERROR";  // unknown levels are shown, as errors
  }
}

}  // namespace

void setPluginLogLevel(sluice_log_level level) { min_level.store(level); }

void hostLog(const void* ctx, sluice_log_level level, const char* msg, size_t len) {
  if (level < min_level.load(std::memory_order_relaxed)) return;
  const auto* library = static_cast<const Library*>(ctx);
  std::string line = levelName(level);
  line += " [plugin ";
  line += library != nullptr ? library->name() : "?";
  line += "] ";
  // A plugin's message stays on one line: CR/LF and other control bytes become spaces.
  for (size_t i = 0; msg != nullptr && i < len; ++i) {
    unsigned char c = static_cast<unsigned char>(msg[i]);
    line += c < 0x20 && c != '\t' ? ' ' : msg[i];
  }
  line += '\n';
  // One write per line, so lines from several threads do not interleave.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

uint64_t hostNowUs() {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
}

}  // namespace sluice::plugin
