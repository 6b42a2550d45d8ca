#include "core/server/discovery_sink.h"

#include "core/api/sdk/names.h"
#include "core/common/log.h"

namespace sluice::server {
namespace {

std::string str(sluice_str s) {
  return s.data == nullptr ? std::string() : std::string(s.data, s.len);
}

int publishTrampoline(sluice_discovery_sink* sink, const sluice_discovery_snapshot* snapshot) {
  if (sink == nullptr || sink->impl == nullptr) return -1;
  return sink->impl->publish(snapshot);
}

const sluice_discovery_host_api kDiscoveryHostApi = {
    sizeof(sluice_discovery_host_api),
    &publishTrampoline,
};

}  // namespace

const sluice_discovery_host_api* discoveryHostApi() { return &kDiscoveryHostApi; }

DiscoverySinkImpl::DiscoverySinkImpl(event_base* base, std::string name,
                                     std::function<void(const Snapshot&)> apply)
    : name_(std::move(name)),
      apply_(std::move(apply)),
      wake_(std::make_unique<event::Notifier>(base, [this] { flush(); })),
      accepted_(stats::defaultRegistry().counter(stats::kDiscoveryUpdates, {name_, "accepted"})),
      refused_(stats::defaultRegistry().counter(stats::kDiscoveryUpdates, {name_, "refused"})) {}

DiscoverySinkImpl::~DiscoverySinkImpl() = default;

void DiscoverySinkImpl::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
}

int DiscoverySinkImpl::publish(const sluice_discovery_snapshot* snapshot) {
  int rc = take(snapshot);
  (rc == 0 ? accepted_ : refused_).inc();  // a plugin thread: the registry's shared store
  return rc;
}

int DiscoverySinkImpl::take(const sluice_discovery_snapshot* snapshot) {
  if (snapshot == nullptr || (snapshot->cluster_count > 0 && snapshot->clusters == nullptr)) {
    SLUICE_LOG(kError, "discovery '", name_, "': refused a null snapshot");
    return -1;
  }
  Snapshot copy;
  for (size_t i = 0; i < snapshot->cluster_count; ++i) {
    const sluice_discovered_cluster& c = snapshot->clusters[i];
    std::string name = str(c.name);
    if (!sdk::isClusterName(name)) {
      SLUICE_LOG(kError, "discovery '", name_, "': refused a snapshot: bad cluster name '", name,
                 "' (want [A-Za-z0-9._-]+)");
      return -1;
    }
    auto& list = copy[name];
    for (size_t j = 0; j < c.endpoint_count; ++j) {
      const sluice_endpoint& e = c.endpoints[j];
      EndpointSpec spec;
      spec.address = str(e.address);
      if (spec.address.empty()) {
        SLUICE_LOG(kError, "discovery '", name_, "': refused a snapshot: empty address in '", name,
                   "'");
        return -1;
      }
      spec.weight = e.weight == 0 ? 1 : e.weight;
      spec.zone = str(e.zone);
      for (size_t k = 0; k < e.metadata_count && e.metadata != nullptr; ++k) {
        spec.metadata.emplace_back(str(e.metadata[2 * k]), str(e.metadata[2 * k + 1]));
      }
      list.push_back(std::move(spec));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return -1;
    latest_ = std::move(copy);
  }
  wake_->notify();
  return 0;
}

void DiscoverySinkImpl::flush() {
  std::optional<Snapshot> snapshot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    snapshot.swap(latest_);
  }
  if (snapshot.has_value()) apply_(*snapshot);
}

}  // namespace sluice::server
