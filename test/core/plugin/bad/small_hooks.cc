// A filter hook table whose struct_size stops before worker_create (a required hook).
#include <cstddef>

#include "test/core/plugin/bad/raw_plugin.h"

namespace {
constexpr sluice_filter_plugin kHooks = {
    offsetof(sluice_filter_plugin, worker_create),
    &sluice::test_bad::configCreate,
    &sluice::test_bad::configDestroy,
    &sluice::test_bad::workerCreate,
};
}  // namespace

SLUICE_TEST_RAW_PLUGIN(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR, sizeof(sluice_plugin_descriptor),
                       SLUICE_PLUGIN_KIND_FILTER, "small_hooks", &kHooks)
