// libname_mismatch.so calls itself "someone_else".
#include "test/core/plugin/bad/raw_plugin.h"

SLUICE_TEST_RAW_PLUGIN(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR, sizeof(sluice_plugin_descriptor),
                       SLUICE_PLUGIN_KIND_FILTER, "someone_else", &sluice::test_bad::kFilterHooks)
