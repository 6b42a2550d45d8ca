// format: dubbo — Dubbo/dubbox providers: <root = /group>/<interface>/providers/<URL-encoded
// provider URL>, e.g. rest%3A%2F%2F10.1.2.3%3A8080%2Frestapi%2Fcom.example.UserService%3F...
//
// The URL is percent-decoded once ('+' is a space, as java.net.URLEncoder writes it). Kept:
// configured protocols (default rest), category absent or "providers", enabled != false,
// weight != 0. The cluster is the first segment of the URL path when the path has at least two
// segments (rest://h:8080/restapi/com.example.UserService → restapi), or one segment that is not
// the interface name; otherwise the URL has no context path and `no_context_path` decides
// (skip, the interface name, or a fixed cluster). Weight: the weight= parameter, default 100
// (Dubbo's), capped at 10000. Hosts exporting many interfaces collapse into one endpoint per
// host:port per cluster in the snapshot builder.
#include <memory>
#include <string>
#include <vector>

#include "discovery/zookeeper/format.h"
#include "discovery/zookeeper/json.h"
#include "discovery/zookeeper/names.h"
#include "discovery/zookeeper/url.h"

namespace sluice::zookeeper {
namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? slash : slash - start);
    if (!part.empty()) out.push_back(part);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

class DubboFormat : public Format {
 public:
  explicit DubboFormat(const DubboOptions& options) : options_(options) {}
  const std::vector<std::string>& levels() const override { return levels_; }
  bool readsLeafData() const override { return false; }
  bool branchIsCluster() const override { return false; }

  LeafResult parseLeaf(const std::vector<std::string>& names, const std::string&) const override {
    std::string text;
    std::string error;
    if (!percentDecode(names[2], true, &text)) return LeafResult::malformed("bad %-escape in URL");
    Url url;
    if (!parseUrl(text, &url, &error)) return LeafResult::malformed("bad URL: " + error);
    bool wanted = false;
    for (const std::string& p : options_.protocols) wanted = wanted || p == url.scheme;
    if (!wanted) return LeafResult::skipped("protocol " + url.scheme + " not kept", true);
    std::string category = url.param("category", "providers");
    if (category != "providers") return LeafResult::skipped("category=" + category, true);
    if (url.param("enabled") == "false") return LeafResult::skipped("enabled=false");
    if (url.host == "0.0.0.0" || url.host == "::") {
      return LeafResult::malformed("unroutable host " + url.host);
    }
    std::string address = joinHostPort(url.host, url.port);
    if (!checkHostPort(address, &error)) return LeafResult::malformed(error);
    int64_t weight = options_.default_weight;
    if (url.hasParam("weight")) {
      YAML::Node w(url.param("weight"));
      if (!readInt(w, 0, INT32_MAX, &weight)) {
        return LeafResult::malformed("bad weight '" + url.param("weight") + "'");
      }
      if (weight == 0) return LeafResult::skipped("weight=0");
      if (weight > kMaxWeight) weight = kMaxWeight;
    }
    LeafResult r;
    r.kind = LeafResult::Kind::kEndpoint;
    std::vector<std::string> segs = segments(url.path);
    std::string interface = url.param("interface", segs.empty() ? "" : segs.back());
    if (segs.size() >= 2 || (segs.size() == 1 && segs[0] != interface)) {
      r.cluster = segs[0];
    } else {
      switch (options_.no_context_path) {
        case DubboOptions::NoContextPath::kInterface:
          r.cluster = interface;
          break;
        case DubboOptions::NoContextPath::kCluster:
          r.cluster = options_.no_context_path_cluster;
          break;
        default:
          return LeafResult::skipped("no context path in " + url.scheme + "://" + address + "/" +
                                     url.path + " (no_context_path: skip)");
      }
    }
    if (!isClusterName(r.cluster))
      return LeafResult::malformed("bad cluster name '" + r.cluster + "'");
    r.endpoint.address = address;
    r.endpoint.weight = static_cast<uint32_t>(weight);
    r.endpoint.metadata.emplace_back("protocol", url.scheme);
    if (url.hasParam("application"))
      r.endpoint.metadata.emplace_back("application", url.param("application"));
    return r;
  }

 private:
  DubboOptions options_;
  std::vector<std::string> levels_{"", "providers", ""};
};

}  // namespace

std::unique_ptr<Format> makeDubboFormat(const DubboOptions& options) {
  return std::make_unique<DubboFormat>(options);
}

}  // namespace sluice::zookeeper
