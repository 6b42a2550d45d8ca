// Clusters: a named group of hosts with a balancing policy.
//
// ClusterInfo is the immutable part shared by all workers (settings from YAML and the balancer's
// validated config instance). WorkerCluster is one worker's view: the balancer instance the
// plugin made for this worker, the current HostSet, and the pick/result calls. Worker thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/event/worker.h"
#include "core/plugin/plugin.h"
#include "core/tls/client_context.h"
#include "core/stats/families.h"
#include "core/upstream/cluster_state.h"
#include "core/upstream/host.h"
#include "core/upstream/wait_queue.h"

namespace sluice::upstream {

struct ClusterInfo {
  config::Cluster config;
  std::shared_ptr<plugin::BalancerConfig> balancer;
  std::shared_ptr<const tls::ClientContext> tls;  // null: plain TCP upstream
  std::shared_ptr<const stats::ClusterStats> stats;  // never null
};

class WorkerCluster {
 public:
  // Worker thread: creates the balancer instance (instance_create) and gives it `hosts`.
  WorkerCluster(std::shared_ptr<const ClusterInfo> info, std::shared_ptr<const HostSet> hosts,
                event::Worker& worker);
  ~WorkerCluster();  // instance_destroy
  WorkerCluster(const WorkerCluster&) = delete;
  WorkerCluster& operator=(const WorkerCluster&) = delete;

  const ClusterInfo& info() const { return *info_; }
  const std::string& name() const { return info_->config.name; }
  // Replaces the host set and tells the balancer (on_host_set).
  void setHosts(std::shared_ptr<const HostSet> hosts);
  const std::shared_ptr<const HostSet>& hosts() const { return hosts_; }
  // Asks the balancer for a host. Returns an index into hosts(), or -1 when none can take the
  // request (empty set, all unhealthy, balancer failed). Indexes returned are range-checked.
  int64_t pick(const sluice_pick_context& ctx);
  // Reports how an attempt on host `index` ended.
  void onResult(uint32_t index, sluice_outcome outcome, uint64_t latency_us);
  // This worker's upstream TLS sessions for the cluster's hosts (null without TLS).
  const std::shared_ptr<tls::SessionCache>& tlsSessions() const { return tls_sessions_; }
  // The cluster's wait queue (max_requests_per_host), shared by every worker and kept across
  // reloads by the ClusterManager; null when none was given (a full cluster then answers 503).
  void setQueue(std::shared_ptr<WaitQueue> queue) { queue_ = std::move(queue); }
  WaitQueue* queue() const { return queue_.get(); }
  const std::shared_ptr<WaitQueue>& sharedQueue() const { return queue_; }
  // The cluster's in-flight counts shared by every worker (retry budget, circuit breakers).
  ClusterState& state() const { return *state_; }
  const std::shared_ptr<ClusterState>& sharedState() const { return state_; }

 private:
  std::shared_ptr<const ClusterInfo> info_;
  std::shared_ptr<const HostSet> hosts_;
  void* instance_ = nullptr;
  std::shared_ptr<tls::SessionCache> tls_sessions_;
  std::shared_ptr<WaitQueue> queue_;
  std::shared_ptr<ClusterState> state_;
};

// The balancer host API table (active_requests, random) the core gives balancer plugins.
const sluice_balancer_host_api* balancerHostApi();

}  // namespace sluice::upstream
