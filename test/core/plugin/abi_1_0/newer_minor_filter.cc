// A filter built against today's SDK whose descriptor claims the next ABI minor (1.3 while the
// host is 1.2): a plugin from a newer sluice SDK that may call host functions this host lacks.
// The host must refuse it and say why.
#include "core/api/sdk/filter.h"

namespace {

class Filter : public sluice::sdk::Filter {};
struct Config {};

}  // namespace

extern "C" __attribute__((visibility("default"))) const sluice_plugin_descriptor*
sluice_plugin_entry(void) {
  static const sluice_plugin_descriptor descriptor = {
      SLUICE_ABI_MAJOR,
      SLUICE_ABI_MINOR + 1,
      sizeof(sluice_plugin_descriptor),
      SLUICE_PLUGIN_KIND_FILTER,
      "newer_minor_filter",
      "1.0.0",
      &sluice::sdk::internal::FilterPlugin<Config, sluice::sdk::NoWorker, Filter>::kHooks};
  return &descriptor;
}
