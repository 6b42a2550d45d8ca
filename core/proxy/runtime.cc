#include "core/proxy/runtime.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "core/common/log.h"
#include "core/proxy/downstream.h"

namespace sluice::proxy {

WorkerFilterChain::Instance::~Instance() {
  const auto& hooks = config->hooks();
  if (worker != nullptr && hooks.worker_destroy != nullptr) hooks.worker_destroy(worker);
}

WorkerFilterChain::WorkerFilterChain(std::shared_ptr<const ListenerInfo> info,
                                     uint32_t worker_index, const Shared* share)
    : info_(std::move(info)), worker_index_(worker_index) {
  instances_.reserve(info_->filters.size());
  for (const auto& f : info_->filters) {
    if (share != nullptr) {
      auto it = share->find(f.get());
      if (it != share->end()) {
        instances_.push_back(it->second);
        continue;
      }
    }
    auto instance = std::make_shared<Instance>();
    instance->config = f.get();
    instance->worker = f->hooks().worker_create(f->config(), worker_index);
    if (instance->worker == nullptr) {
      f->hookFailed(plugin::Hook::kWorkerCreate);
      SLUICE_LOG(kError, "filter '", f->name(), "' failed to create its worker instance; ",
                 "requests through listener '", info_->config.name, "'",
                 info_->route.empty() ? "" : " on route '" + info_->route + "'",
                 " answer 500 (failure_mode: closed) or skip it (open)");
    }
    instances_.push_back(std::move(instance));
  }
  entries_.resize(instances_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const sluice_filter_plugin& hooks = info_->filters[i]->hooks();
    // Hooks this config instance said it never needs (ABI 1.3) are left out like absent ones.
    const uint32_t unused = info_->filters[i]->unusedHooks();
    auto keep = [unused](auto fn, uint32_t bit) { return (unused & bit) != 0 ? nullptr : fn; };
    Entry& e = entries_[i];
    e.worker = instances_[i]->worker;
    e.stream_create = hooks.stream_create;
    e.stream_destroy = hooks.stream_destroy;
    e.headers[0] = keep(hooks.on_request_headers, SLUICE_HOOK_REQUEST_HEADERS);
    e.headers[1] = keep(hooks.on_response_headers, SLUICE_HOOK_RESPONSE_HEADERS);
    e.body[0] = keep(hooks.on_request_body, SLUICE_HOOK_REQUEST_BODY);
    e.body[1] = keep(hooks.on_response_body, SLUICE_HOOK_RESPONSE_BODY);
    e.on_log = keep(hooks.on_log, SLUICE_HOOK_LOG);
    for (int d = 0; d < 2; ++d) body_hooks_[d] += e.body[d] != nullptr ? 1 : 0;
  }
}

// Members go in reverse order: the instances (worker_destroy) before the info that keeps their
// config instances alive.
WorkerFilterChain::~WorkerFilterChain() = default;

const std::vector<stats::FilterStats>& WorkerFilterChain::makeFilterStats() {
  filter_stats_.emplace();
  filter_stats_->reserve(size());
  for (size_t i = 0; i < size(); ++i) filter_stats_->emplace_back(info_->config.name, name(i));
  return *filter_stats_;
}

config::FailureMode WorkerFilterChain::failureMode(size_t i) const {
  return i < info_->config.filters.size() ? info_->config.filters[i].failure_mode
                                          : config::FailureMode::kClosed;
}

std::shared_ptr<WorkerFilterChain> WorkerFilterChain::forRoute(const config::Route* route) {
  const std::shared_ptr<WorkerFilterChain>* own = routeChain(route);
  return own != nullptr ? *own : shared_from_this();
}

std::shared_ptr<WorkerFilterChain> WorkerFilterChain::nonEmptyForRoute(const config::Route* route,
                                                                       bool* foreign) {
  const std::shared_ptr<WorkerFilterChain>* own = routeChain(route, foreign);
  if (own != nullptr) return (*own)->size() != 0 ? *own : nullptr;
  return size() != 0 ? shared_from_this() : nullptr;
}

const std::shared_ptr<WorkerFilterChain>* WorkerFilterChain::routeChain(const config::Route* route,
                                                                        bool* foreign) {
  if (route == nullptr || route_chains_.empty()) return nullptr;
  const std::vector<config::Route>& routes = routes_->config->routes;
  const std::less<const config::Route*> before;
  if (!before(route, routes.data()) && before(route, routes.data() + routes.size())) {
    const auto& chain = route_chains_[static_cast<size_t>(route - routes.data())];
    return chain != nullptr ? &chain : nullptr;
  }
  // Not a route of the table attached here: the caller routed with another table than the
  // worker's current one (WorkerRuntime::setRoutes attaches every table to every live chain).
  if (foreign != nullptr) *foreign = true;
  if (!warned_foreign_route_) {
    warned_foreign_route_ = true;
    SLUICE_LOG(kError, "route '", route->name.empty() ? route->prefix : route->name,
               "' is not in the route table of listener '", info_->config.name,
               "' (a bug: please report it); its requests are refused with 500 (logged once)");
  }
  return nullptr;
}

void WorkerFilterChain::setRoutes(const std::shared_ptr<const RouteTable>& routes) {
  if (routes == routes_) return;
  const std::vector<std::shared_ptr<const ListenerInfo>>* infos = nullptr;
  if (routes != nullptr && info_->route.empty()) {
    auto it = routes->chains.find(info_->config.name);
    if (it != routes->chains.end()) infos = &it->second;
  }
  std::vector<std::shared_ptr<WorkerFilterChain>> next;
  if (infos != nullptr) {
    // Instances to share: this chain's own (the listener's filters) and those of the route
    // chains being replaced (a route entry whose config instance was kept).
    Shared share;
    absl::flat_hash_map<const ListenerInfo*, std::shared_ptr<WorkerFilterChain>> kept;
    for (size_t i = 0; i < instances_.size(); ++i)
      share.emplace(instances_[i]->config, instances_[i]);
    for (const auto& c : route_chains_) {
      if (c == nullptr) continue;
      kept.emplace(c->info_.get(), c);
      for (const auto& in : c->instances_) share.emplace(in->config, in);
    }
    next.resize(infos->size());
    for (size_t r = 0; r < infos->size(); ++r) {
      const auto& info = (*infos)[r];
      if (info == nullptr) continue;
      auto same = kept.find(info.get());
      next[r] = same != kept.end()
                    ? same->second
                    : std::make_shared<WorkerFilterChain>(info, worker_index_, &share);
    }
  }
  route_chains_ = std::move(next);
  routes_ = routes;
}

WorkerRuntime::WorkerRuntime(event::Worker& worker, ConnectionBalancer* balancer)
    : worker_(worker),
      pool_(worker),
      streams_(worker),
      parker_(worker.base(),
              {this, &DownstreamConnection::parkHook, &DownstreamConnection::wakeParked}),
      trim_(worker.base()),
      balancer_(balancer),
      worker_connections_(stats::defaultRegistry().gauge(stats::kWorkerConnections,
                                                         {std::to_string(worker.index())})) {}

WorkerRuntime::~WorkerRuntime() {
  for (auto& l : listeners_) closeSlot(*l);
  connections_.clear();
  pool_.clear();
  last_cluster_ = nullptr;
  clusters_.clear();
}

void WorkerRuntime::closeSlot(ListenerSlot& slot) {
  slot.removed = true;
  if (slot.listener != nullptr) {
    evconnlistener_free(slot.listener);
    slot.listener = nullptr;
  }
}

void WorkerRuntime::applyListeners(const std::vector<ListenerUpdate>& updates) {
  std::vector<std::shared_ptr<ListenerSlot>> next;
  for (const ListenerUpdate& u : updates) {
    const std::string& name = u.info->config.name;
    std::shared_ptr<ListenerSlot> slot;
    for (auto& old : listeners_) {
      if (old != nullptr && old->name == (u.keep.empty() ? name : u.keep) && u.fd < 0) {
        slot = std::move(old);
        slot->name = name;
        break;
      }
    }
    if (slot == nullptr) {
      if (u.fd < 0) continue;  // nothing to keep and no socket: should not happen
      slot = std::make_shared<ListenerSlot>();
      slot->name = name;
      slot->runtime = this;
      // Backlog 0: the socket listens already (listenOn(), with the listener's backlog); -1
      // would make libevent call listen(fd, 128) again and shorten the queue to 128.
      slot->listener = evconnlistener_new(worker_.base(), &WorkerRuntime::onAccept, slot.get(),
                                          LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, u.fd);
      if (draining_ && slot->listener != nullptr) evconnlistener_disable(slot->listener);
    }
    if (slot->chain == nullptr || &slot->chain->info() != u.info.get()) {
      slot->chain = std::make_shared<WorkerFilterChain>(u.info, worker_.index());
      slot->chain->setRoutes(routes_);
      chains_.push_back(slot->chain);
    }
    next.push_back(std::move(slot));
  }
  // Whatever was not carried over stops accepting; its idle connections close now, busy ones
  // after their current response.
  for (auto& old : listeners_) {
    if (old == nullptr) continue;
    closeSlot(*old);
    closeConnectionsOf(old.get());
  }
  listeners_ = std::move(next);
}

void WorkerRuntime::setRoutes(std::shared_ptr<const RouteTable> routes) {
  routes_ = std::move(routes);
  // Every live listener chain takes the new table; chains no listener holds any more are
  // dropped. (Not a compaction by move: moving a weak_ptr onto itself empties it in libstdc++,
  // which lost every chain at the second reload and with them all route filters.)
  chains_.erase(std::remove_if(chains_.begin(), chains_.end(),
                               [this](const std::weak_ptr<WorkerFilterChain>& weak) {
                                 auto chain = weak.lock();
                                 if (chain == nullptr) return true;
                                 chain->setRoutes(routes_);
                                 return false;
                               }),
                chains_.end());
}

void WorkerRuntime::closeConnectionsOf(const ListenerSlot* slot) {
  parker_.wakeAll(slot);  // parked ones are rebuilt, then drained with the others
  std::vector<DownstreamConnection*> conns;
  for (auto& [raw, conn] : connections_) {
    if (raw->slot() == slot) conns.push_back(raw);
  }
  for (DownstreamConnection* c : conns) c->drain();
}

void WorkerRuntime::onAccept(evconnlistener*, evutil_socket_t fd, sockaddr* addr, int len,
                             void* arg) {
  auto* slot = static_cast<ListenerSlot*>(arg);
  WorkerRuntime* rt = slot->runtime;
  if (rt->draining_ || slot->removed) {
    evutil_closesocket(fd);
    return;
  }
  if (rt->handOff(*slot, fd, addr, len)) return;
  std::shared_ptr<ListenerSlot> shared;
  for (auto& l : rt->listeners_) {
    if (l.get() == slot) shared = l;
  }
  rt->serve(std::move(shared), fd, addr, len);
}

bool WorkerRuntime::handOff(ListenerSlot& slot, int fd, const sockaddr* addr, int len) {
  if (balancer_ == nullptr || slot.chain == nullptr ||
      slot.chain->info().config.connection_balance != config::ConnectionBalance::kExact) {
    return false;
  }
  const uint32_t self = worker_.index();
  const uint32_t to = balancer_->pick(self);
  if (to == self) return false;
  HandedOver h;
  h.listener = slot.name;
  h.address = slot.chain->info().config.address;
  h.fd = fd;
  h.peer_len =
      static_cast<socklen_t>(std::min(static_cast<size_t>(len > 0 ? len : 0), sizeof(h.peer)));
  std::memcpy(&h.peer, addr, h.peer_len);
  h.from = self;
  h.origin = &slot;
  slot.chain->info().stats->rebalanced.inc();
  balancer_->post(to, [h = std::move(h)](WorkerRuntime& rt) { rt.acceptHandedOver(h); });
  return true;
}

void WorkerRuntime::acceptHandedOver(const HandedOver& h) {
  std::shared_ptr<ListenerSlot> slot;
  for (auto& l : listeners_) {
    if (l != nullptr && !l->removed && l->name == h.listener && l->chain != nullptr &&
        l->chain->info().config.address == h.address) {
      slot = l;
    }
  }
  if (!draining_ && slot != nullptr) {
    sockaddr_storage peer = h.peer;
    serve(std::move(slot), h.fd, reinterpret_cast<sockaddr*>(&peer), static_cast<int>(h.peer_len));
    return;
  }
  countChanged(open_connections_);  // drops the reservation pick() made
  // Not this worker's listener (yet or any more: a reload reaches the workers one after the
  // other, and a renamed listener keeps its socket) or this worker drains: the worker that
  // accepted it serves it after all.
  balancer_->post(h.from, [h](WorkerRuntime& rt) { rt.acceptReturned(h); });
}

void WorkerRuntime::acceptReturned(const HandedOver& h) {
  std::shared_ptr<ListenerSlot> slot;
  for (auto& l : listeners_) {
    if (l.get() == h.origin && !l->removed) slot = l;
  }
  if (draining_ || slot == nullptr) {
    // Like a connection still in the accept queue when its listener closes.
    SLUICE_LOG(kDebug, "connection handed back on listener '", h.listener,
               "' closed: ", draining_ ? "the worker drains" : "the listener is gone");
    evutil_closesocket(h.fd);
    return;
  }
  sockaddr_storage peer = h.peer;
  serve(std::move(slot), h.fd, reinterpret_cast<sockaddr*>(&peer), static_cast<int>(h.peer_len));
}

void WorkerRuntime::serve(std::shared_ptr<ListenerSlot> slot, int fd, sockaddr* addr, int len) {
  auto conn = std::make_unique<DownstreamConnection>(*this, std::move(slot), fd, addr, len);
  DownstreamConnection* raw = conn.get();
  connections_.emplace(raw, std::move(conn));
  connectionOpened();
  raw->start();
}

DownstreamConnection* WorkerRuntime::adopt(std::unique_ptr<DownstreamConnection> conn) {
  DownstreamConnection* raw = conn.get();
  connections_.emplace(raw, std::move(conn));
  return raw;
}

void WorkerRuntime::connectionOpened() { countChanged(++open_connections_); }

void WorkerRuntime::connectionClosed() {
  if (open_connections_ > 0) countChanged(--open_connections_);
}

void WorkerRuntime::countChanged(size_t n) {
  // Parked connections count: after a burst of keep-alive clients, most of them parked, close,
  // the count of connection objects never fell by kMinDrop and the buffers of the burst stayed
  // resident (~1.2 MiB after 5,000, bench/memory).
  trim_.onConnectionCount(n);
  worker_connections_.set(static_cast<int64_t>(n));
  if (balancer_ != nullptr) balancer_->update(worker_.index(), n);
}

void WorkerRuntime::setCluster(std::shared_ptr<const upstream::ClusterInfo> info,
                               std::shared_ptr<const upstream::HostSet> hosts,
                               std::shared_ptr<upstream::WaitQueue> queue) {
  auto it = clusters_.find(info->config.name);
  if (it != clusters_.end() && &it->second->info() == info.get()) {
    it->second->setHosts(std::move(hosts));
    it->second->setQueue(std::move(queue));
    return;
  }
  last_cluster_ = nullptr;
  std::string name = info->config.name;
  auto cluster =
      std::make_shared<upstream::WorkerCluster>(std::move(info), std::move(hosts), worker_);
  cluster->setQueue(std::move(queue));
  clusters_[name] = std::move(cluster);
}

void WorkerRuntime::removeCluster(const std::string& name) {
  last_cluster_ = nullptr;
  clusters_.erase(name);
}

std::shared_ptr<upstream::WorkerCluster> WorkerRuntime::cluster(std::string_view name) const {
  if (last_cluster_ != nullptr && last_cluster_->first == name) return last_cluster_->second;
  auto it = clusters_.find(absl::string_view(name.data(), name.size()));
  if (it == clusters_.end()) return nullptr;
  last_cluster_ = &*it;
  return it->second;
}

void WorkerRuntime::release(DownstreamConnection* conn) {
  auto it = connections_.find(conn);
  if (it == connections_.end()) return;
  worker_.deferDelete(std::move(it->second));
  connections_.erase(it);
  if (draining_) maybeDrained();
}

void WorkerRuntime::drain(std::function<void()> done) {
  draining_ = true;
  drained_ = std::move(done);
  for (auto& l : listeners_) {
    if (l->listener != nullptr) {
      evconnlistener_free(l->listener);
      l->listener = nullptr;
    }
  }
  parker_.wakeAll(nullptr);  // parked ones are rebuilt, then drained with the others
  std::vector<DownstreamConnection*> conns;
  conns.reserve(connections_.size());
  for (auto& [raw, conn] : connections_) conns.push_back(raw);
  for (DownstreamConnection* c : conns) c->drain();
  pool_.clear();
  maybeDrained();
}

void WorkerRuntime::closeAll() {
  parker_.wakeAll(nullptr);
  std::vector<DownstreamConnection*> conns;
  conns.reserve(connections_.size());
  for (auto& [raw, conn] : connections_) conns.push_back(raw);
  for (DownstreamConnection* c : conns) c->abortByServer();
}

void WorkerRuntime::maybeDrained() {
  if (!connections_.empty() || !drained_) return;
  auto done = std::move(drained_);
  drained_ = nullptr;
  done();
}

}  // namespace sluice::proxy
