// A descriptor whose struct_size stops before `hooks`.
#include "test/core/plugin/bad/raw_plugin.h"

SLUICE_TEST_RAW_PLUGIN(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR, 16u, SLUICE_PLUGIN_KIND_FILTER,
                       "small_descriptor", &sluice::test_bad::kFilterHooks)
