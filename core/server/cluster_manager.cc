#include "core/server/cluster_manager.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "core/common/log.h"
#include "core/event/main_thread.h"
#include "core/upstream/host_limit.h"

namespace sluice::server {

ClusterManager::ClusterManager(PostAll post_all, event_base* base)
    : post_all_(std::move(post_all)),
      health_(std::make_unique<upstream::health::HealthManager>(
          base, [this](const std::string& name) { refresh(name); })) {}

void ClusterManager::refresh(const std::string& name) {
  auto it = clusters_.find(name);
  if (it != clusters_.end()) publish(name, it->second);
}

void ClusterManager::addInitial(std::shared_ptr<const upstream::ClusterInfo> info,
                                std::shared_ptr<const upstream::HostSet> hosts) {
  std::string name = info->config.name;
  yaml_[name] = {};
  for (const auto& e : hosts->entries()) {
    yaml_[name].push_back(EndpointSpec{e.host->address(), e.weight, e.zone, e.metadata});
  }
  clusters_[name] = Entry{std::move(info), std::move(hosts)};
}

std::shared_ptr<const upstream::ClusterInfo> ClusterManager::fromTemplate(
    const ClusterTemplate& tmpl, const std::string& name) const {
  auto info = std::make_unique<upstream::ClusterInfo>();
  info->config = tmpl.defaults;
  info->config.name = name;
  info->config.endpoints.clear();
  info->balancer = tmpl.balancer;
  info->tls = tmpl.tls;
  info->stats = std::make_shared<const stats::ClusterStats>(name);
  return event::mainThreadOwned(std::move(info));
}

bool ClusterManager::discoveredEndpoints(const std::string& name,
                                         std::vector<EndpointSpec>* out) const {
  bool found = false;
  for (const auto& [source, clusters] : by_source_) {
    auto it = clusters.find(name);
    if (it == clusters.end()) continue;
    found = true;
    out->insert(out->end(), it->second.begin(), it->second.end());
  }
  return found;
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
      entry.host = std::make_shared<upstream::Host>(cluster, spec.address,
                                                    reinterpret_cast<sockaddr*>(&ss), len);
    }
    entry.weight = spec.weight == 0 ? 1 : spec.weight;
    entry.zone = spec.zone;
    entry.metadata = spec.metadata;
    entries.push_back(std::move(entry));
  }
  return std::make_shared<upstream::HostSet>(next_version_++, std::move(entries));
}

void ClusterManager::publish(const std::string& name, Entry& entry) {
  entry.hosts = health_->prepare(name, entry.info->config, *entry.hosts, next_version_++);
  if (entry.queue == nullptr) {
    entry.queue = std::make_shared<upstream::WaitQueue>(entry.info->config.name);
  }
  auto info = entry.info;
  auto hosts = entry.hosts;
  auto queue = entry.queue;
  post_all_([info, hosts, queue](proxy::WorkerRuntime& rt) { rt.setCluster(info, hosts, queue); });
  // New hosts, or a higher limit, may have room for requests that wait: their turns are posted
  // after the new host set, so each worker sees the new set first. With no healthy host left at
  // all, every waiting request is woken too, to get its 503 (no_healthy_host) now.
  if (!queue->empty()) {
    bool any_healthy = false;
    for (size_t i = 0; i < hosts->size(); ++i) any_healthy |= hosts->cView()->hosts[i].healthy != 0;
    queue->wake(any_healthy ? upstream::freeSlots(*hosts, info->config.max_requests_per_host)
                            : SIZE_MAX);
  }
}

void ClusterManager::remove(const std::string& name) {
  auto it = clusters_.find(name);
  if (it != clusters_.end() && it->second.queue != nullptr) it->second.queue->close();
  clusters_.erase(name);
  health_->removeCluster(name);
  post_all_([name](proxy::WorkerRuntime& rt) { rt.removeCluster(name); });
  SLUICE_LOG(kInfo, "cluster '", name, "' removed");
}

bool ClusterManager::setEndpoints(const std::string& cluster,
                                  const std::vector<EndpointSpec>& endpoints,
                                  std::vector<std::string>* errors) {
  auto it = clusters_.find(cluster);
  if (it == clusters_.end()) return false;
  it->second.hosts = buildHostSet(&it->second, endpoints, cluster, errors);
  publish(it->first, it->second);
  SLUICE_LOG(kInfo, "cluster '", cluster, "': ", it->second.hosts->size(), " endpoints");
  return true;
}

void ClusterManager::applySnapshot(size_t source, const ClusterTemplate& tmpl,
                                   const std::map<std::string, std::vector<EndpointSpec>>& snapshot,
                                   std::vector<std::string>* errors) {
  template_balancer_[source] = tmpl.balancer;
  std::map<std::string, std::vector<EndpointSpec>>& mine = by_source_[source];
  // Names whose list from this source changed (or whose cluster does not exist yet). A cluster
  // with an unchanged list keeps its host set and version: no needless rebuild of schedules.
  std::vector<std::string> changed;
  for (const auto& [name, endpoints] : mine) {
    auto now = snapshot.find(name);
    if (now == snapshot.end() || now->second != endpoints) changed.push_back(name);
  }
  for (const auto& [name, endpoints] : snapshot) {
    auto before = mine.find(name);
    if (before == mine.end() || clusters_.count(name) == 0) changed.push_back(name);
  }
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  mine = snapshot;
  for (const std::string& name : changed) {
    std::vector<EndpointSpec> endpoints;
    bool named = discoveredEndpoints(name, &endpoints);
    auto it = clusters_.find(name);
    if (it == clusters_.end()) {
      if (!named) continue;
      Entry entry{fromTemplate(tmpl, name), nullptr};
      entry.hosts = buildHostSet(nullptr, endpoints, name, errors);
      SLUICE_LOG(kInfo, "cluster '", name, "' discovered with ", entry.hosts->size(), " endpoints");
      it = clusters_.emplace(name, std::move(entry)).first;
      publish(it->first, it->second);
      continue;
    }
    if (!named) {
      auto y = yaml_.find(name);
      if (y != yaml_.end()) {
        SLUICE_LOG(kWarn, "cluster '", name,
                   "' vanished from discovery; back to its YAML endpoints");
        endpoints = y->second;
      } else {
        SLUICE_LOG(kWarn, "cluster '", name, "' vanished from discovery; it now has no endpoints");
      }
    }
    setEndpoints(name, endpoints, errors);
  }
}

void ClusterManager::reconcile(const std::vector<ClusterSpec>& yaml,
                               const std::vector<ClusterTemplate>& templates,
                               std::vector<std::string>* errors) {
  // Sources that are gone: forget what they published.
  std::vector<std::string> orphaned;
  for (auto it = by_source_.begin(); it != by_source_.end();) {
    if (it->first < templates.size()) {
      ++it;
      continue;
    }
    for (const auto& [name, unused] : it->second) orphaned.push_back(name);
    template_balancer_.erase(it->first);
    it = by_source_.erase(it);
  }
  std::map<std::string, std::vector<EndpointSpec>> next_yaml;
  for (const ClusterSpec& spec : yaml) {
    const std::string& name = spec.info->config.name;
    next_yaml[name] = spec.endpoints;
    std::vector<EndpointSpec> discovered;
    bool named = discoveredEndpoints(name, &discovered);
    const std::vector<EndpointSpec>& endpoints = named ? discovered : spec.endpoints;
    auto it = clusters_.find(name);
    if (it == clusters_.end()) {
      Entry entry{spec.info, buildHostSet(nullptr, endpoints, name, errors)};
      it = clusters_.emplace(name, std::move(entry)).first;
      publish(it->first, it->second);
      continue;
    }
    it->second.info = spec.info;
    it->second.hosts = buildHostSet(&it->second, endpoints, name, errors);
    publish(it->first, it->second);
  }
  // Discovered clusters whose source template changed take the new settings and balancer.
  for (const auto& [source, clusters] : by_source_) {
    const ClusterTemplate& tmpl = templates[source];
    auto tb = template_balancer_.find(source);
    if (tb != template_balancer_.end() && tb->second == tmpl.balancer) continue;
    template_balancer_[source] = tmpl.balancer;
    for (const auto& [name, unused] : clusters) {
      auto c = clusters_.find(name);
      if (c == clusters_.end() || next_yaml.count(name) != 0) continue;
      c->second.info = fromTemplate(tmpl, name);
      publish(c->first, c->second);
    }
  }
  // Clusters neither the YAML nor any source names any more are removed.
  std::vector<std::string> candidates = orphaned;
  for (const auto& [name, unused] : yaml_) candidates.push_back(name);
  for (const std::string& name : candidates) {
    std::vector<EndpointSpec> ignored;
    if (next_yaml.count(name) == 0 && !discoveredEndpoints(name, &ignored) &&
        clusters_.count(name) != 0) {
      remove(name);
    }
  }
  yaml_ = std::move(next_yaml);
}

}  // namespace sluice::server
