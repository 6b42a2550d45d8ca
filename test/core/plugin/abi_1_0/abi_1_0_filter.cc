// A filter plugin as its author built it against the ABI 1.0 SDK (the frozen headers beside
// this file; see README.md): adds `X-Abi-1-0: <value>` to the request (the upstream sees it)
// and `X-Abi-1-0-Seen: yes` to the response. Config: `value` (default "yes").
#include <string>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"

// Built against the frozen copy, never against today's core/api (a build that picked up the
// newer headers would prove nothing).
static_assert(SLUICE_ABI_MAJOR == 1u && SLUICE_ABI_MINOR == 0u,
              "abi_1_0_filter must be built against test/core/plugin/abi_1_0/core/api");

namespace {

struct Config {
  explicit Config(const sluice::sdk::ConfigNode& node) {
    node.requireOnlyKeys({"value"});
    value = node.getString("value", "yes");
  }
  std::string value;
};

class Filter : public sluice::sdk::Filter {
 public:
  explicit Filter(const Config& config) : config_(config) {}
  sluice::sdk::FilterStatus onRequestHeaders(sluice::sdk::Stream& stream, bool) override {
    stream.setHeader(sluice::sdk::HeaderMap::kRequest, "X-Abi-1-0", config_.value);
    return sluice::sdk::FilterStatus::kContinue;
  }
  sluice::sdk::FilterStatus onResponseHeaders(sluice::sdk::Stream& stream, bool) override {
    stream.setHeader(sluice::sdk::HeaderMap::kResponse, "X-Abi-1-0-Seen", "yes");
    return sluice::sdk::FilterStatus::kContinue;
  }

 private:
  const Config& config_;
};

}  // namespace

SLUICE_FILTER_PLUGIN("abi_1_0_filter", "1.0.0", Config, Filter)
