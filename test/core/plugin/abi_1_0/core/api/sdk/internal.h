// sluice C++ SDK — implementation details shared by the SDK's trampolines. Not for plugin code.
//
// The trampolines are the C functions the SDK puts in a plugin's hook table. They own the C++
// objects behind the opaque `void*` handles of the C ABI, and they stop every exception at the C
// boundary.
#pragma once

#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/api/common.h"
#include "core/api/sdk/config.h"
#include "core/api/sdk/host.h"

namespace sluice::sdk::internal {

// Writes a NUL-terminated, possibly truncated `message` and the position into `err`.
inline void fillError(sluice_error* err, std::string_view message, uint32_t line, uint32_t column) {
  if (err == nullptr) return;
  if (err->message != nullptr && err->capacity > 0) {
    size_t n = message.size() < err->capacity - 1 ? message.size() : err->capacity - 1;
    message.copy(err->message, n);
    err->message[n] = '\0';
  }
  err->line = line;
  err->column = column;
}

// Constructs T from the first argument list it accepts: (a, b), then (a), then ().
// Returns a prvalue, so T need not be movable.
template <typename T, typename A, typename B>
T constructFrom(A& a, B& b) {
  if constexpr (std::is_constructible_v<T, A&, B&>) {
    return T(a, b);
  } else if constexpr (std::is_constructible_v<T, A&>) {
    return T(a);
  } else {
    static_assert(std::is_default_constructible_v<T>,
                  "plugin class needs a constructor taking (config, context), (config) or ()");
    return T();
  }
}

// What a config_create returns as `void*`: the host table plus the author's config object.
template <typename ConfigT>
struct ConfigHolder {
  ConfigHolder(const sluice_host_api* api, const ConfigNode& node)
      : host(api), config(constructFrom<ConfigT>(node, std::as_const(host))) {}
  Host host;
  ConfigT config;
};

// The config_create trampoline for any plugin kind. ConfigError → its message and position;
// other exceptions → their what() and the config block's position.
template <typename ConfigT, typename Holder = ConfigHolder<ConfigT>>
void* configCreate(const sluice_host_api* host, const sluice_config_node* cfg,
                   sluice_error* err) noexcept {
  try {
    if (host == nullptr || host->config == nullptr) {
      fillError(err, "host passed no config accessors", 0, 0);
      return nullptr;
    }
    // Owned by the host from here on as an opaque handle; config_destroy takes it back.
    return std::make_unique<Holder>(host, ConfigNode(host->config, cfg)).release();
  } catch (const ConfigError& e) {
    fillError(err, e.what(), e.line(), e.column());
  } catch (const std::exception& e) {
    fillError(err, e.what(), 0, 0);
  } catch (...) {
    fillError(err, "unknown error while reading config", 0, 0);
  }
  return nullptr;
}

// The config_destroy trampoline: takes back ownership of the handle configCreate released.
template <typename ConfigT>
void configDestroy(void* config) noexcept {
  std::unique_ptr<ConfigHolder<ConfigT>> owned(static_cast<ConfigHolder<ConfigT>*>(config));
}

// Logs "<what> threw: <message>" through the host; used by trampolines that swallow exceptions.
inline void logException(const Host& host, const char* where) noexcept {
  std::string text = std::string(where) + " threw: ";
  try {
    throw;
  } catch (const std::exception& e) {
    text += e.what();
  } catch (...) {
    text += "unknown exception";
  }
  host.log(LogLevel::kError, text);
}

}  // namespace sluice::sdk::internal
