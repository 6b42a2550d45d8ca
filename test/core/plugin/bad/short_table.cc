// Not bad: a filter hook table as an older minor would have it, ending right after the required
// hooks. The statically stored table has on_log set beyond struct_size; the host must read it as
// NULL.
#include <cstddef>

#include "test/core/plugin/bad/raw_plugin.h"

namespace {
constexpr sluice_filter_plugin kHooks = {
    offsetof(sluice_filter_plugin, stream_create),
    &sluice::test_bad::configCreate,
    &sluice::test_bad::configDestroy,
    &sluice::test_bad::workerCreate,
    &sluice::test_bad::workerDestroy,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    &sluice::test_bad::onLog,
};
}  // namespace

SLUICE_TEST_RAW_PLUGIN(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR, sizeof(sluice_plugin_descriptor),
                       SLUICE_PLUGIN_KIND_FILTER, "short_table", &kHooks)
