// sluice C++ SDK — the host's common callbacks (logging, clock) as a small C++ wrapper.
//
// Header-only; includes only core/api/*.h and std headers, so plugins built outside this repo can
// use it. Nothing here throws.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/api/common.h"

namespace sluice::sdk {

// Log levels (values of sluice_log_level).
enum class LogLevel : sluice_log_level {
  kDebug = SLUICE_LOG_DEBUG,
  kInfo = SLUICE_LOG_INFO,
  kWarn = SLUICE_LOG_WARN,
  kError = SLUICE_LOG_ERROR,
};

// A borrowed view of the host's callback table (sluice_host_api). Cheap to copy. The table stays
// valid until the plugin is unloaded, so a config, worker or request object may keep a Host.
// A Host over nullptr (unit tests calling plugin classes directly) logs nothing and reads 0 time.
class Host {
 public:
  Host() = default;
  explicit Host(const sluice_host_api* api) : api_(api) {}

  // Logs `message` at `level`, tagged by the host with the plugin's name. Any thread.
  void log(LogLevel level, std::string_view message) const {
    if (api_ != nullptr && api_->log != nullptr) {
      api_->log(api_->host_ctx, static_cast<sluice_log_level>(level), message.data(),
                message.size());
    }
  }
  // Monotonic clock in microseconds. Any thread.
  uint64_t nowUs() const { return api_ != nullptr && api_->now_us != nullptr ? api_->now_us() : 0; }
  // The raw table (may be nullptr), for kind-specific host tables.
  const sluice_host_api* raw() const { return api_; }

 private:
  const sluice_host_api* api_ = nullptr;
};

}  // namespace sluice::sdk
