// format: sluice — <root>/<context path>/<host:port>, node data optional JSON:
//   {"weight": 10, "zone": "a", "metadata": {"version": "v2"}}
// Empty data means weight 1, no zone, no metadata. Unknown keys are ignored with a warning (a
// typo must not take a live backend out); a bad value makes the node malformed.
#include <memory>
#include <string>
#include <vector>

#include "discovery/zookeeper/format.h"
#include "discovery/zookeeper/json.h"
#include "discovery/zookeeper/names.h"

namespace sluice::zookeeper {
namespace {

class SluiceFormat : public Format {
 public:
  const std::vector<std::string>& levels() const override { return levels_; }
  bool readsLeafData() const override { return true; }
  bool branchIsCluster() const override { return true; }

  LeafResult parseLeaf(const std::vector<std::string>& names,
                       const std::string& data) const override {
    const std::string& context = names[0];
    const std::string& address = names[1];
    std::string error;
    if (!isClusterName(context)) return LeafResult::malformed("bad context path '" + context + "'");
    if (!checkHostPort(address, &error)) {
      return LeafResult::malformed("bad address '" + address + "': " + error);
    }
    YAML::Node json;
    if (!parseJsonObject(data, &json, &error)) return LeafResult::malformed(error);
    LeafResult r;
    r.kind = LeafResult::Kind::kEndpoint;
    r.cluster = context;
    r.endpoint.address = address;
    std::string unknown;
    try {
      for (const auto& kv : json) {
        std::string key = kv.first.Scalar();
        if (key == "weight") {
          int64_t w = 0;
          if (!readInt(kv.second, 1, kMaxWeight, &w)) {
            return LeafResult::malformed("weight: expected an integer 1.." +
                                         std::to_string(kMaxWeight));
          }
          r.endpoint.weight = static_cast<uint32_t>(w);
        } else if (key == "zone") {
          if (!kv.second.IsScalar()) return LeafResult::malformed("zone: expected a string");
          r.endpoint.zone = kv.second.Scalar();
        } else if (key == "metadata") {
          if (!readStringMap(kv.second, &r.endpoint.metadata, &error)) {
            return LeafResult::malformed("metadata: " + error);
          }
        } else {
          unknown += (unknown.empty() ? "'" : ", '") + key + "'";
        }
      }
    } catch (const std::exception& e) {
      return LeafResult::malformed(std::string("bad JSON: ") + e.what());
    }
    if (!unknown.empty()) r.warning = "unknown keys ignored: " + unknown;
    return r;
  }

 private:
  std::vector<std::string> levels_{"", ""};
};

}  // namespace

std::unique_ptr<Format> makeSluiceFormat() { return std::make_unique<SluiceFormat>(); }

std::unique_ptr<Format> makeFormat(const ZookeeperConfig& config) {
  switch (config.format) {
    case FormatKind::kDubbo:
      return makeDubboFormat(config.dubbo);
    case FormatKind::kCurator:
      return makeCuratorFormat();
    default:
      return makeSluiceFormat();
  }
}

}  // namespace sluice::zookeeper
