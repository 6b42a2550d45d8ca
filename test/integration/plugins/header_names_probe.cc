// header_names_probe — a test filter plugin for ABI 1.4's header calls by interned name, as the
// host implements them (core/proxy/filter_host.cc). Every name is resolved once, in the config:
//   request:  X-Probe-Seen: <x-abi-1-0, read by a handle of another letter case>
//             X-Probe-Second: <the second X-Multi field>
//             X-Probe-Removed: <how many X-Drop fields were removed>
//             Cache-Control: probe (set: replaces every copy the client sent; a known name)
//             X-Probe-Invalid: refused|accepted (setting a value with a LF in it)
//   response: X-Probe-Resp: yes (added)
//   filters: [header_names_probe]
#include <stdexcept>
#include <string>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"

namespace {

using sluice::sdk::FilterStatus;
using sluice::sdk::HeaderMap;
using sluice::sdk::HeaderName;

struct ProbeConfig {
  ProbeConfig(const sluice::sdk::ConfigNode& node, const sluice::sdk::Host& host)
      : abi(host, "x-ABI-1-0"),
        multi(host, "X-Multi"),
        drop(host, "X-Drop"),
        cache_control(host, "Cache-Control"),
        seen(host, "X-Probe-Seen"),
        second(host, "X-Probe-Second"),
        removed(host, "X-Probe-Removed"),
        invalid(host, "X-Probe-Invalid"),
        resp(host, "X-Probe-Resp") {
    node.requireOnlyKeys({});
    if (abi.handle() == nullptr) throw std::runtime_error("the host gave no handle (ABI 1.4)");
  }
  HeaderName abi, multi, drop, cache_control, seen, second, removed, invalid, resp;
};

class ProbeFilter : public sluice::sdk::Filter {
 public:
  explicit ProbeFilter(const ProbeConfig& config) : c_(config) {}
  FilterStatus onRequestHeaders(sluice::sdk::Stream& stream, bool) override {
    stream.setHeader(HeaderMap::kRequest, c_.seen,
                     stream.header(HeaderMap::kRequest, c_.abi).value_or("(none)"));
    stream.setHeader(HeaderMap::kRequest, c_.second,
                     stream.header(HeaderMap::kRequest, c_.multi, 1).value_or("(none)"));
    size_t n = stream.removeHeader(HeaderMap::kRequest, c_.drop);
    stream.addHeader(HeaderMap::kRequest, c_.removed, std::to_string(n));
    stream.setHeader(HeaderMap::kRequest, c_.cache_control, "probe");
    bool ok = stream.setHeader(HeaderMap::kRequest, c_.invalid, "a\nb");
    stream.addHeader(HeaderMap::kRequest, c_.invalid, ok ? "accepted" : "refused");
    return FilterStatus::kContinue;
  }
  FilterStatus onResponseHeaders(sluice::sdk::Stream& stream, bool) override {
    stream.addHeader(HeaderMap::kResponse, c_.resp, "yes");
    return FilterStatus::kContinue;
  }

 private:
  const ProbeConfig& c_;
};

}  // namespace

SLUICE_FILTER_PLUGIN("header_names_probe", "1.0.0", ProbeConfig, ProbeFilter)
