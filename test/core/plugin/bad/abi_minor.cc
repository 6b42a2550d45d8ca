// Built against a newer minor than the host's.
#include "test/core/plugin/bad/raw_plugin.h"

SLUICE_TEST_RAW_PLUGIN(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR + 1, sizeof(sluice_plugin_descriptor),
                       SLUICE_PLUGIN_KIND_FILTER, "abi_minor", &sluice::test_bad::kFilterHooks)
