// Health of every cluster's hosts, decided on the main thread: active health check results
// (from the HealthChecker thread), outlier ejections (reported by workers), un-ejection and
// slow-start steps (a main-thread timer), and the panic mode of each cluster. Whenever a
// host's usability or effective weight changes, the cluster is republished (a new HostSet
// with a new version) so every worker's balancer sees the change at once.
//
// The ClusterManager calls prepare() for every host set it publishes; prepare() applies panic
// and effective weights and keeps the probes in line with the hosts (hosts kept by address keep
// their state and schedule, removed hosts stop being probed, a changed health_check applies).
// Main thread only, except reportOutlier() (any thread).
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/upstream/health/checker.h"
#include "core/upstream/health/state.h"
#include "core/upstream/host.h"

namespace sluice::upstream::health {

class HealthManager {
 public:
  // Asks the owner to publish `cluster` again (it calls prepare() on the way).
  using Republish = std::function<void(const std::string& cluster)>;

  // `base`: the main thread's event_base (for the un-ejection / slow-start timer); null runs
  // no timer and no probes (unit tests of the cluster manager).
  HealthManager(event_base* base, Republish republish);
  ~HealthManager();
  HealthManager(const HealthManager&) = delete;
  HealthManager& operator=(const HealthManager&) = delete;

  // The set to publish for `cluster` with settings `cfg`, from `hosts` (the endpoints):
  // the same entries with panic and slow-start weights applied, as version `version`.
  std::shared_ptr<const HostSet> prepare(const std::string& cluster, const config::Cluster& cfg,
                                         const HostSet& hosts, uint64_t version);
  // The cluster is gone: stop probing it.
  void removeCluster(const std::string& cluster);
  // Whether `cluster` is in panic mode now.
  bool panic(const std::string& cluster) const;

  // Any thread: a worker saw `host` of `cluster` reach an outlier threshold. The decision
  // (max_ejection_percent, already ejected) is made on the main thread.
  static void reportOutlier(const std::string& cluster, std::shared_ptr<Host> host,
                            Ejection reason);

  // Steady-clock milliseconds (the clock of ejected_until_ms).
  static uint64_t nowMs();

 private:
  struct ClusterState {
    config::Cluster cfg;
    std::string check_key;  // healthCheckKey of the probes running
    std::vector<std::shared_ptr<Host>> hosts;
    bool panic = false;
    stats::Gauge panic_gauge;
  };

  void onProbe(const std::string& cluster, const std::shared_ptr<Host>& host,
               const ProbeResult& result);
  void onOutlier(const std::string& cluster, const std::shared_ptr<Host>& host, Ejection reason);
  void tick();
  static void onTick(evutil_socket_t, short, void* arg);
  HealthChecker& checker();
  // Starts slow start for `h` when the cluster has it on.
  void warm(const ClusterState& c, HostHealth& h);

  event_base* base_;
  Republish republish_;
  ::event* tick_ = nullptr;
  std::unique_ptr<HealthChecker> checker_;  // created with the first health-checked cluster
  std::map<std::string, ClusterState> clusters_;
  std::shared_ptr<bool> alive_;  // for results posted to the main thread after destruction
};

}  // namespace sluice::upstream::health
