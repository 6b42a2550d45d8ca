// A filter (written with the SDK) whose config accepts only `allowed: <int 1..10>`, and throws a
// plain exception for `explode: true`.
#include <stdexcept>

#include "core/api/sdk/filter.h"

namespace {

struct Config {
  explicit Config(const sluice::sdk::ConfigNode& node) {
    if (node.getBool("explode", false)) throw std::runtime_error("exploded without a position");
    node.requireOnlyKeys({"allowed"});
    node.getInt("allowed", 1, 1, 10);
  }
};

class Filter : public sluice::sdk::Filter {
 public:
  explicit Filter(const Config&) {}
};

}  // namespace

SLUICE_FILTER_PLUGIN("refuses_config", "0.0.0", Config, Filter)
