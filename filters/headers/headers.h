// headers — adds, sets and removes request headers (on the way upstream) and response headers
// (on the way downstream). Per direction the order is: remove, then set, then add.
//
// YAML:
//   filters:
//     - name: headers
//       config:
//         request:
//           remove: [X-Internal-Debug]          # every field with that name
//           set: {X-Gateway: sluice}            # replaces every field with that name by one
//           add: {Via: 1.1 sluice}              # appends a field (a list value adds several)
//         response:
//           set: {Cache-Control: no-store}
//
// Names must be tokens, values must not contain CR, LF or NUL; Content-Length and
// Transfer-Encoding are refused (the proxy owns message framing). Checked at config time, with
// the offending line and column.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"

namespace sluice::filters {

// The changes for one direction.
struct HeaderOps {
  std::vector<std::string> remove;
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::pair<std::string, std::string>> add;

  bool empty() const { return remove.empty() && set.empty() && add.empty(); }
  // Applies remove → set → add to `map` of `stream`.
  void apply(sdk::Stream& stream, sdk::HeaderMap map) const;
};

// Immutable after construction (main thread); read by every worker.
struct HeadersConfig {
  explicit HeadersConfig(const sdk::ConfigNode& node);

  HeaderOps request;
  HeaderOps response;
};

// Per request; holds nothing but the config.
class HeadersFilter : public sdk::Filter {
 public:
  explicit HeadersFilter(const HeadersConfig& config) : config_(config) {}

  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override {
    config_.request.apply(stream, sdk::HeaderMap::kRequest);
    return sdk::FilterStatus::kContinue;
  }
  sdk::FilterStatus onResponseHeaders(sdk::Stream& stream, bool end_stream) override {
    config_.response.apply(stream, sdk::HeaderMap::kResponse);
    return sdk::FilterStatus::kContinue;
  }

 private:
  const HeadersConfig& config_;
};

}  // namespace sluice::filters
