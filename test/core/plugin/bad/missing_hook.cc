// A full-size filter hook table with worker_create NULL.
#include "test/core/plugin/bad/raw_plugin.h"

namespace {
constexpr sluice_filter_plugin kHooks = {
    sizeof(sluice_filter_plugin),
    &sluice::test_bad::configCreate,
    &sluice::test_bad::configDestroy,
    nullptr,
};
}  // namespace

SLUICE_TEST_RAW_PLUGIN(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR, sizeof(sluice_plugin_descriptor),
                       SLUICE_PLUGIN_KIND_FILTER, "missing_hook", &kHooks)
