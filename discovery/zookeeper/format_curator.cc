// format: curator — Apache Curator x-discovery, as Spring Cloud Zookeeper writes it:
// <root, default /services>/<service name>/<instance id>, data = ServiceInstance JSON:
//   {"name":"restapi","id":"7f3c...","address":"10.1.2.3","port":8080,"sslPort":null,
//    "payload":{"@class":"...ZookeeperInstance","metadata":{"instance_status":"UP"}},
//    "registrationTimeUTC":1690000000000,"serviceType":"DYNAMIC","uriSpec":{...}}
// Cluster = service name (the node's parent). Endpoint = address:port. Skipped: instances whose
// payload.metadata.instance_status is present and not UP, and instances with only an sslPort.
// payload.metadata becomes endpoint metadata (its `zone` the endpoint's zone, its `weight`, when
// an integer 1..10000, the weight). Unknown fields are ignored.
#include <memory>
#include <string>
#include <vector>

#include "discovery/zookeeper/format.h"
#include "discovery/zookeeper/json.h"
#include "discovery/zookeeper/names.h"

namespace sluice::zookeeper {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

class CuratorFormat : public Format {
 public:
  const std::vector<std::string>& levels() const override { return levels_; }
  bool readsLeafData() const override { return true; }
  bool branchIsCluster() const override { return true; }

  LeafResult parseLeaf(const std::vector<std::string>& names,
                       const std::string& data) const override {
    const std::string& service = names[0];
    if (!isClusterName(service)) return LeafResult::malformed("bad service name '" + service + "'");
    if (data.find_first_not_of(" \t\r\n") == std::string::npos) {
      return LeafResult::malformed("no ServiceInstance data");
    }
    YAML::Node json;
    std::string error;
    if (!parseJsonObject(data, &json, &error)) return LeafResult::malformed(error);
    try {
      YAML::Node payload = json["payload"];
      YAML::Node metadata = payload.IsMap() ? payload["metadata"] : YAML::Node();
      std::vector<std::pair<std::string, std::string>> meta;
      if (metadata.IsDefined() && !readStringMap(metadata, &meta, &error)) {
        meta.clear();  // a nested value somewhere: keep the scalars only
        for (const auto& kv : metadata) {
          if (kv.first.IsScalar() && kv.second.IsScalar()) {
            meta.emplace_back(kv.first.Scalar(), kv.second.Scalar());
          }
        }
      }
      for (const auto& [k, v] : meta) {
        if (k == "instance_status" && upper(v) != "UP") {
          return LeafResult::skipped("instance_status " + v);
        }
      }
      YAML::Node address = json["address"];
      if (!address.IsScalar() || address.Scalar().empty()) {
        return LeafResult::malformed("missing \"address\"");
      }
      int64_t port = 0;
      YAML::Node port_node = json["port"];
      if (!port_node.IsDefined() || port_node.IsNull()) {
        int64_t ssl = 0;
        if (readInt(json["sslPort"], 1, 65535, &ssl)) {
          return LeafResult::skipped("only an sslPort (TLS upstreams are not supported)");
        }
        return LeafResult::malformed("missing \"port\"");
      }
      if (!readInt(port_node, 1, 65535, &port)) return LeafResult::malformed("bad \"port\"");
      LeafResult r;
      r.kind = LeafResult::Kind::kEndpoint;
      r.cluster = service;
      r.endpoint.address = joinHostPort(address.Scalar(), static_cast<int>(port));
      if (!checkHostPort(r.endpoint.address, &error)) {
        return LeafResult::malformed("bad address '" + r.endpoint.address + "': " + error);
      }
      for (const auto& [k, v] : meta) {
        if (k == "zone") r.endpoint.zone = v;
        int64_t w = 0;
        if (k == "weight" && readInt(YAML::Node(v), 1, kMaxWeight, &w)) {
          r.endpoint.weight = static_cast<uint32_t>(w);
        }
      }
      r.endpoint.metadata = std::move(meta);
      YAML::Node id = json["id"];
      if (id.IsScalar()) r.endpoint.metadata.emplace_back("instance_id", id.Scalar());
      return r;
    } catch (const std::exception& e) {
      return LeafResult::malformed(std::string("bad ServiceInstance: ") + e.what());
    }
  }

 private:
  std::vector<std::string> levels_{"", ""};
};

}  // namespace

std::unique_ptr<Format> makeCuratorFormat() { return std::make_unique<CuratorFormat>(); }

}  // namespace sluice::zookeeper
