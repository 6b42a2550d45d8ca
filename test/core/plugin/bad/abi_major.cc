// Built for ABI major 2.
#include "test/core/plugin/bad/raw_plugin.h"

SLUICE_TEST_RAW_PLUGIN(2u, 0u, sizeof(sluice_plugin_descriptor), SLUICE_PLUGIN_KIND_FILTER,
                       "abi_major", &sluice::test_bad::kFilterHooks)
