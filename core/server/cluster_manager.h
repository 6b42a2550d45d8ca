// The main thread's view of every cluster: settings, balancer config, and the current host set.
// Endpoint changes (from discovery, later from health checks and reloads) are applied here and
// posted to every worker as a new immutable HostSet; the same Host object is kept for an
// address that stays, so in-flight counts, health and pooled connections survive the change.
// Main thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/proxy/runtime.h"
#include "core/upstream/cluster.h"
#include "core/upstream/host.h"

namespace sluice::server {

struct EndpointSpec {
  std::string address;  // "host:port"
  uint32_t weight = 1;  // 0 is read as 1
  std::string zone;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Where a discovery entry's clusters come from: settings and a shared balancer config.
struct ClusterTemplate {
  config::Cluster defaults;
  std::shared_ptr<plugin::BalancerConfig> balancer;
};

class ClusterManager {
 public:
  // Runs `fn` on every worker (on its thread) with its runtime.
  using PostAll = std::function<void(std::function<void(proxy::WorkerRuntime&)>)>;

  explicit ClusterManager(PostAll post_all) : post_all_(std::move(post_all)) {}

  // A cluster from the config, before workers start (no post).
  void addInitial(std::shared_ptr<const upstream::ClusterInfo> info,
                  std::shared_ptr<const upstream::HostSet> hosts);

  // Replaces the endpoint list of `cluster`. Unresolvable endpoints are skipped and reported in
  // *errors; the rest apply. Returns false when the cluster does not exist.
  bool setEndpoints(const std::string& cluster, const std::vector<EndpointSpec>& endpoints,
                    std::vector<std::string>* errors);

  // Applies a full discovery snapshot from `source` (a discovery entry's index): clusters named
  // in it get its endpoint lists (created from `tmpl` when new, unless the YAML defines the
  // cluster, whose settings then win); clusters `source` published before and not now are
  // emptied (kept, answering 503) — so a registry hiccup never deletes a route.
  void applySnapshot(size_t source, const ClusterTemplate& tmpl,
                     const std::map<std::string, std::vector<EndpointSpec>>& snapshot,
                     std::vector<std::string>* errors);

  struct Entry {
    std::shared_ptr<const upstream::ClusterInfo> info;
    std::shared_ptr<const upstream::HostSet> hosts;
  };
  const std::map<std::string, Entry>& clusters() const { return clusters_; }

 private:
  std::shared_ptr<const upstream::HostSet> buildHostSet(const Entry* current,
                                                        const std::vector<EndpointSpec>& endpoints,
                                                        const std::string& cluster,
                                                        std::vector<std::string>* errors);
  void publish(const Entry& entry);

  PostAll post_all_;
  std::map<std::string, Entry> clusters_;
  std::map<size_t, std::vector<std::string>> owned_;  // discovery source → clusters it named
  uint64_t next_version_ = 2;
};

}  // namespace sluice::server
