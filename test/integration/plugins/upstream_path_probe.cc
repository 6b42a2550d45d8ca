// upstream_path_probe — a test filter plugin for set_upstream_path (ABI 1.2), as the host
// implements it (core/proxy/filter_host.cc):
//   X-Set-Path: P    onRequestHeaders calls setUpstreamPath(P) and adds the request headers
//                    X-Set-Result: ok|refused and X-Seen-Upstream-Path: <upstreamPath() after>
//   X-Pause: 1       the same, but from a timer while the request headers are paused
// and in onResponseHeaders (too late) it tries again and adds the response header
// X-Late-Result: ok|refused.
//   filters: [upstream_path_probe]
#include <string>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"

namespace {

struct ProbeConfig {
  ProbeConfig(const sluice::sdk::ConfigNode& node, const sluice::sdk::Host&) {
    node.requireOnlyKeys({});
  }
};

using sluice::sdk::FilterStatus;
using sluice::sdk::HeaderMap;

class ProbeFilter : public sluice::sdk::Filter {
 public:
  explicit ProbeFilter(const ProbeConfig&) {}
  FilterStatus onRequestHeaders(sluice::sdk::Stream& stream, bool) override {
    auto path = stream.header(HeaderMap::kRequest, "X-Set-Path");
    if (!path) return FilterStatus::kContinue;
    path_ = std::string(*path);
    if (stream.header(HeaderMap::kRequest, "X-Pause")) {
      stream.armTimer(20);
      return FilterStatus::kPause;
    }
    apply(stream);
    return FilterStatus::kContinue;
  }
  void onTimer(sluice::sdk::Stream& stream, uint64_t) override {
    apply(stream);
    stream.resume();
  }
  FilterStatus onResponseHeaders(sluice::sdk::Stream& stream, bool) override {
    if (path_.empty()) return FilterStatus::kContinue;
    bool ok = stream.setUpstreamPath("/too-late");
    stream.setHeader(HeaderMap::kResponse, "X-Late-Result", ok ? "ok" : "refused");
    return FilterStatus::kContinue;
  }

 private:
  void apply(sluice::sdk::Stream& stream) {
    bool ok = stream.setUpstreamPath(path_);
    stream.setHeader(HeaderMap::kRequest, "X-Set-Result", ok ? "ok" : "refused");
    stream.setHeader(HeaderMap::kRequest, "X-Seen-Upstream-Path", stream.upstreamPath());
  }
  std::string path_;
};

}  // namespace

SLUICE_FILTER_PLUGIN("upstream_path_probe", "1.0.0", ProbeConfig, ProbeFilter)
