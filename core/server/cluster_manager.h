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
#include "core/upstream/health/manager.h"
#include "core/upstream/host.h"

namespace sluice::server {

struct EndpointSpec {
  std::string address;  // "host:port"
  uint32_t weight = 1;  // 0 is read as 1
  std::string zone;
  std::vector<std::pair<std::string, std::string>> metadata;

  bool operator==(const EndpointSpec& o) const {
    return address == o.address && weight == o.weight && zone == o.zone && metadata == o.metadata;
  }
  bool operator!=(const EndpointSpec& o) const { return !(*this == o); }
};

// Where a discovery entry's clusters come from: settings and a shared balancer config.
struct ClusterTemplate {
  config::Cluster defaults;
  std::shared_ptr<plugin::BalancerConfig> balancer;
  std::shared_ptr<const tls::ClientContext> tls;  // from defaults.tls; null: plain TCP
};

// A cluster defined in the YAML, as built for (re)configuration.
struct ClusterSpec {
  std::shared_ptr<const upstream::ClusterInfo> info;
  std::vector<EndpointSpec> endpoints;  // from the YAML (discovery may replace them)
  std::string key;                      // settings + balancer config, for reuse and diffs
};

class ClusterManager {
 public:
  // Runs `fn` on every worker (on its thread) with its runtime.
  using PostAll = std::function<void(std::function<void(proxy::WorkerRuntime&)>)>;

  // `base`: the main thread's event_base, for health checking and outlier ejection timers
  // (null: no probes, no un-ejection; unit tests).
  explicit ClusterManager(PostAll post_all, event_base* base = nullptr);

  // A cluster from the config, before workers start (no post).
  void addInitial(std::shared_ptr<const upstream::ClusterInfo> info,
                  std::shared_ptr<const upstream::HostSet> hosts);

  // Replaces the endpoint list of `cluster`. Unresolvable endpoints are skipped and reported in
  // *errors; the rest apply. Returns false when the cluster does not exist.
  bool setEndpoints(const std::string& cluster, const std::vector<EndpointSpec>& endpoints,
                    std::vector<std::string>* errors);

  // Applies a full discovery snapshot from `source` (a discovery entry's index). A cluster's
  // endpoints are the union of what every source names for it (so two registries can feed one
  // cluster); a cluster is created from `tmpl` when new (the YAML's settings win for a cluster
  // it defines). A cluster no source names any more is emptied (kept, answering 503) — a
  // registry hiccup never deletes a route — or, when the YAML defines it, gets its YAML
  // endpoints back.
  void applySnapshot(size_t source, const ClusterTemplate& tmpl,
                     const std::map<std::string, std::vector<EndpointSpec>>& snapshot,
                     std::vector<std::string>* errors);

  // A reload: the YAML clusters become exactly `yaml` (new settings/balancers applied, hosts
  // kept by address); YAML clusters that are gone are removed unless a discovery source still
  // names them; discovered clusters take their source's new template when it changed
  // (`templates[i]` for source i); a source that is gone has its clusters removed.
  void reconcile(const std::vector<ClusterSpec>& yaml,
                 const std::vector<ClusterTemplate>& templates, std::vector<std::string>* errors);

  struct Entry {
    std::shared_ptr<const upstream::ClusterInfo> info;
    std::shared_ptr<const upstream::HostSet> hosts;
    // The cluster's wait queue (max_requests_per_host): made with the entry, kept as long as the
    // cluster exists whatever reloads change, closed when it is removed.
    std::shared_ptr<upstream::WaitQueue> queue;
  };
  const std::map<std::string, Entry>& clusters() const { return clusters_; }
  // Health state of every cluster (panic mode; per host state is in upstream::Host::health()).
  const upstream::health::HealthManager& health() const { return *health_; }

 private:
  std::shared_ptr<const upstream::HostSet> buildHostSet(const Entry* current,
                                                        const std::vector<EndpointSpec>& endpoints,
                                                        const std::string& cluster,
                                                        std::vector<std::string>* errors);
  // Applies health (panic, slow-start weights) to entry.hosts and posts it to every worker
  // (making the cluster's wait queue on first use); then, when the hosts have room for
  // requests that wait, hands them their turns.
  void publish(const std::string& name, Entry& entry);
  // Publishes `name` again with its current endpoints (a health state changed).
  void refresh(const std::string& name);

  PostAll post_all_;
  std::unique_ptr<upstream::health::HealthManager> health_;
  std::map<std::string, Entry> clusters_;
  std::shared_ptr<const upstream::ClusterInfo> fromTemplate(const ClusterTemplate& tmpl,
                                                            const std::string& name) const;
  void remove(const std::string& name);

  // The union of every source's endpoints for `name`; false when no source names it.
  bool discoveredEndpoints(const std::string& name, std::vector<EndpointSpec>* out) const;

  // What each discovery source last published.
  std::map<size_t, std::map<std::string, std::vector<EndpointSpec>>> by_source_;
  // Clusters defined in the YAML, with their YAML endpoints.
  std::map<std::string, std::vector<EndpointSpec>> yaml_;
  std::map<size_t, std::shared_ptr<plugin::BalancerConfig>> template_balancer_;
  uint64_t next_version_ = 2;
};

}  // namespace sluice::server
