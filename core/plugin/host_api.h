// The host's common callbacks for plugins (sluice_host_api.log / now_us).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/api/common.h"

namespace sluice::plugin {

// Plugin log lines below `level` are dropped (default SLUICE_LOG_INFO). Thread-safe.
void setPluginLogLevel(sluice_log_level level);

// sluice_host_api.log: writes "<time> LEVEL [thread] [plugin NAME] msg" as one stderr line. `ctx`
// is the plugin's Library. Thread-safe.
void hostLog(const void* ctx, sluice_log_level level, const char* msg, size_t len);

// sluice_host_api.now_us: CLOCK_MONOTONIC in microseconds. Thread-safe.
uint64_t hostNowUs();

}  // namespace sluice::plugin
