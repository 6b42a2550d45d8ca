// Shared pieces of the purpose-made bad plugins: hook functions that do nothing, and a filter
// hook table with every hook set. Each bad plugin breaks exactly one thing.
#pragma once

#include "core/api/filter.h"

namespace sluice::test_bad {

inline void* configCreate(const sluice_host_api*, const sluice_config_node*, sluice_error*) {
  static int config;
  return &config;
}
inline void configDestroy(void*) {}
inline void* workerCreate(void* config, uint32_t) { return config; }
inline void workerDestroy(void*) {}
inline void onLog(void*, const sluice_stream*) {}

// A complete, valid filter hook table (stream hooks optional and left NULL but on_log).
constexpr sluice_filter_plugin kFilterHooks = {
    sizeof(sluice_filter_plugin),
    &configCreate,
    &configDestroy,
    &workerCreate,
    &workerDestroy,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    &onLog,
};

}  // namespace sluice::test_bad

// Defines sluice_plugin_entry returning a descriptor built from the given fields.
#define SLUICE_TEST_RAW_PLUGIN(MAJOR, MINOR, SIZE, KIND, NAME, HOOKS)                           \
  extern "C" __attribute__((visibility("default"))) const sluice_plugin_descriptor*             \
  sluice_plugin_entry(void) {                                                                   \
    static const sluice_plugin_descriptor d = {MAJOR, MINOR, SIZE, KIND, NAME, "0.0.0", HOOKS}; \
    return &d;                                                                                  \
  }
