// Registry formats: where a format's instances live under the root, and what one instance node
// says. Three formats (see docs/zookeeper.md):
//
//   sluice   <root>/<context path>/<host:port>          data: optional JSON {weight, zone,
//   metadata} dubbo    <root = /group>/<interface>/providers/<URL-encoded provider URL>   (no data
//   read) curator  <root>/<service name>/<instance id>        data: Curator ServiceInstance JSON
//
// A Format is immutable after construction and used from the discovery's loop thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/api/sdk/discovery.h"
#include "discovery/zookeeper/config.h"

namespace sluice::zookeeper {

// What one instance node (a leaf of the watched tree) means.
struct LeafResult {
  enum class Kind { kEndpoint, kSkipped, kMalformed };
  Kind kind = Kind::kMalformed;
  std::string cluster;     // for kEndpoint
  sdk::Endpoint endpoint;  // for kEndpoint
  std::string reason;      // why skipped or malformed
  std::string warning;     // for kEndpoint: something odd worth one log line ("" = none)
  bool quiet = false;      // for kSkipped: expected (e.g. another protocol); count, do not log

  static LeafResult malformed(std::string why) {
    LeafResult r;
    r.reason = std::move(why);
    return r;
  }
  static LeafResult skipped(std::string why, bool quiet = false) {
    LeafResult r;
    r.kind = Kind::kSkipped;
    r.reason = std::move(why);
    r.quiet = quiet;
    return r;
  }
};

class Format {
 public:
  virtual ~Format() = default;
  // The levels under the root down to the instance nodes: "" = every child, a name = only the
  // child of that name (Dubbo's "providers").
  virtual const std::vector<std::string>& levels() const = 0;
  // Whether instance nodes' data is read (and watched for changes).
  virtual bool readsLeafData() const = 0;
  // Whether a first-level node names a cluster by itself (so it exists, maybe empty, with no
  // instances): true for sluice (context path) and curator (service name).
  virtual bool branchIsCluster() const = 0;
  // Reads one instance. `names` are the node names from the root's child down to the instance
  // (levels().size() of them, raw as in ZooKeeper); `data` its data ("" when not read).
  virtual LeafResult parseLeaf(const std::vector<std::string>& names,
                               const std::string& data) const = 0;
};

std::unique_ptr<Format> makeSluiceFormat();
std::unique_ptr<Format> makeDubboFormat(const DubboOptions& options);
std::unique_ptr<Format> makeCuratorFormat();
// The format `config` names.
std::unique_ptr<Format> makeFormat(const ZookeeperConfig& config);

}  // namespace sluice::zookeeper
