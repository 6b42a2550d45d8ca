#include "core/upstream/cluster.h"

#include "core/common/log.h"
#include "core/upstream/health/manager.h"

namespace sluice::upstream {
namespace {

uint32_t activeRequests(const sluice_host_set* set, uint32_t index) {
  const auto* hosts = static_cast<const HostSet*>(set->host_ctx);
  if (hosts == nullptr || index >= hosts->size()) return 0;
  return hosts->at(index).host->active();
}

uint64_t workerRandom() {
  event::Worker* w = event::Worker::current();
  if (w != nullptr) return w->random();
  // Off a worker (tests, main thread): a thread-local generator seeded from the address of a
  // local, good enough for tie-breaking.
  thread_local uint64_t state = reinterpret_cast<uintptr_t>(&state) * 0x9E3779B97F4A7C15ULL;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

const sluice_balancer_host_api kBalancerHostApi = {
    sizeof(sluice_balancer_host_api),
    &activeRequests,
    &workerRandom,
};

}  // namespace

const sluice_balancer_host_api* balancerHostApi() { return &kBalancerHostApi; }

WorkerCluster::WorkerCluster(std::shared_ptr<const ClusterInfo> info,
                             std::shared_ptr<const HostSet> hosts, event::Worker& worker)
    : info_(std::move(info)),
      hosts_(std::move(hosts)),
      state_(ClusterState::forCluster(info_->config.name)) {
  if (info_->tls != nullptr) tls_sessions_ = std::make_shared<tls::SessionCache>();
  const auto& hooks = info_->balancer->hooks();
  instance_ =
      hooks.instance_create(info_->balancer->config(), info_->config.name.c_str(), worker.index());
  if (instance_ == nullptr) {
    info_->balancer->hookFailed(plugin::Hook::kInstanceCreate);
    SLUICE_LOG(kError, "cluster ", info_->config.name, ": balancer '", info_->balancer->name(),
               "' failed to create its instance; the cluster answers 503 on this worker");
    return;
  }
  hooks.on_host_set(instance_, hosts_->cView());
}

WorkerCluster::~WorkerCluster() {
  const auto& hooks = info_->balancer->hooks();
  if (instance_ != nullptr && hooks.instance_destroy != nullptr) hooks.instance_destroy(instance_);
}

void WorkerCluster::setHosts(std::shared_ptr<const HostSet> hosts) {
  // Tell the balancer first: it may keep pointers into the old set until this call returns.
  std::shared_ptr<const HostSet> old = std::move(hosts_);
  hosts_ = std::move(hosts);
  if (instance_ != nullptr) info_->balancer->hooks().on_host_set(instance_, hosts_->cView());
}

int64_t WorkerCluster::pick(const sluice_pick_context& ctx) {
  if (instance_ == nullptr || hosts_->size() == 0) return -1;
  int64_t i = info_->balancer->hooks().pick(instance_, &ctx);
  if (i < 0 || static_cast<uint64_t>(i) >= hosts_->size()) return -1;
  return i;
}

void WorkerCluster::onResult(uint32_t index, sluice_outcome outcome, uint64_t latency_us) {
  const config::OutlierDetection& od = info_->config.outlier_detection;
  if (od.enabled && index < hosts_->size()) {
    const std::shared_ptr<Host>& host = hosts_->at(index).host;
    health::Ejection e = health::recordOutcome(host->health(), outcome, od);
    if (e != health::Ejection::kNone) health::HealthManager::reportOutlier(name(), host, e);
  }
  const auto& hooks = info_->balancer->hooks();
  if (instance_ != nullptr && hooks.on_result != nullptr) {
    hooks.on_result(instance_, index, outcome, latency_us);
  }
}

}  // namespace sluice::upstream
