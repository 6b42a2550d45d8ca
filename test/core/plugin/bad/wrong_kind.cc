// Says it is a balancer (with a filter's table); the tests load it as a filter.
#include "test/core/plugin/bad/raw_plugin.h"

SLUICE_TEST_RAW_PLUGIN(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR, sizeof(sluice_plugin_descriptor),
                       SLUICE_PLUGIN_KIND_BALANCER, "wrong_kind", &sluice::test_bad::kFilterHooks)
