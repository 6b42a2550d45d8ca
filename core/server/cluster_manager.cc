#include "core/server/cluster_manager.h"

#include "absl/container/flat_hash_map.h"
#include "core/common/log.h"

namespace sluice::server {

void ClusterManager::addInitial(std::shared_ptr<const upstream::ClusterInfo> info,
                                std::shared_ptr<const upstream::HostSet> hosts) {
  std::string name = info->config.name;
  clusters_[name] = Entry{std::move(info), std::move(hosts)};
}

std::shared_ptr<const upstream::HostSet> ClusterManager::buildHostSet(
    const Entry* current, const std::vector<EndpointSpec>& endpoints, const std::string& cluster,
    std::vector<std::string>* errors) {
  absl::flat_hash_map<std::string, std::shared_ptr<upstream::Host>> existing;
  if (current != nullptr && current->hosts != nullptr) {
    for (const auto& e : current->hosts->entries()) existing[e.host->address()] = e.host;
  }
  std::vector<upstream::HostEntry> entries;
  entries.reserve(endpoints.size());
  absl::flat_hash_map<std::string, bool> seen;
  for (const EndpointSpec& spec : endpoints) {
    if (!seen.emplace(spec.address, true).second) continue;  // one endpoint per address
    upstream::HostEntry entry;
    auto it = existing.find(spec.address);
    if (it != existing.end()) {
      entry.host = it->second;
    } else {
      sockaddr_storage ss{};
      socklen_t len = 0;
      std::string error;
      if (!upstream::resolveAddress(spec.address, &ss, &len, &error)) {
        errors->push_back("cluster '" + cluster + "': " + error);
        continue;
      }
      entry.host =
          std::make_shared<upstream::Host>(spec.address, reinterpret_cast<sockaddr*>(&ss), len);
    }
    entry.weight = spec.weight == 0 ? 1 : spec.weight;
    entry.zone = spec.zone;
    entry.metadata = spec.metadata;
    entries.push_back(std::move(entry));
  }
  return std::make_shared<upstream::HostSet>(next_version_++, std::move(entries));
}

void ClusterManager::publish(const Entry& entry) {
  auto info = entry.info;
  auto hosts = entry.hosts;
  post_all_([info, hosts](proxy::WorkerRuntime& rt) { rt.setCluster(info, hosts); });
}

bool ClusterManager::setEndpoints(const std::string& cluster,
                                  const std::vector<EndpointSpec>& endpoints,
                                  std::vector<std::string>* errors) {
  auto it = clusters_.find(cluster);
  if (it == clusters_.end()) return false;
  it->second.hosts = buildHostSet(&it->second, endpoints, cluster, errors);
  publish(it->second);
  SLUICE_LOG(kInfo, "cluster '", cluster, "': ", it->second.hosts->size(), " endpoints");
  return true;
}

void ClusterManager::applySnapshot(size_t source, const ClusterTemplate& tmpl,
                                   const std::map<std::string, std::vector<EndpointSpec>>& snapshot,
                                   std::vector<std::string>* errors) {
  std::vector<std::string> named;
  for (const auto& [name, endpoints] : snapshot) {
    named.push_back(name);
    auto it = clusters_.find(name);
    if (it == clusters_.end()) {
      auto info = std::make_shared<upstream::ClusterInfo>();
      info->config = tmpl.defaults;
      info->config.name = name;
      info->config.endpoints.clear();
      info->balancer = tmpl.balancer;
      Entry entry{std::move(info), nullptr};
      entry.hosts = buildHostSet(nullptr, endpoints, name, errors);
      SLUICE_LOG(kInfo, "cluster '", name, "' discovered with ", entry.hosts->size(),
                 " endpoints");
      it = clusters_.emplace(name, std::move(entry)).first;
      publish(it->second);
      continue;
    }
    setEndpoints(name, endpoints, errors);
  }
  // Clusters this source named before but not now: emptied, not removed.
  for (const std::string& old : owned_[source]) {
    if (snapshot.count(old) != 0) continue;
    SLUICE_LOG(kWarn, "cluster '", old, "' vanished from discovery; it now has no endpoints");
    setEndpoints(old, {}, errors);
  }
  owned_[source] = std::move(named);
}

}  // namespace sluice::server
