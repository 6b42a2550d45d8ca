// What a worker runs on: its listeners (with their filter chains' per-worker instances), its
// clusters (per-worker balancer instances and host sets), its upstream connection pool and its
// downstream connections. Built and used on the worker's own thread only.
#pragma once

#include <event2/listener.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/accesslog/sink.h"
#include "core/config/config.h"
#include "core/event/worker.h"
#include "core/http/parser.h"
#include "core/plugin/plugin.h"
#include "core/proxy/stream_registry.h"
#include "core/tls/server_context.h"
#include "core/stats/families.h"
#include "core/upstream/cluster.h"
#include "core/upstream/pool.h"

namespace sluice::proxy {

class DownstreamConnection;

// Immutable listener settings shared by all workers.
struct ListenerInfo {
  config::Listener config;
  std::vector<std::shared_ptr<plugin::FilterConfig>> filters;  // chain, request order
  http::ParserLimits parser_limits;
  config::Limits limits;
  std::shared_ptr<const tls::ServerContext> tls;  // null: plain TCP listener
  std::vector<std::shared_ptr<const accesslog::Sink>> access_logs;  // one line per request each
  std::shared_ptr<const stats::ListenerStats> stats;  // never null
};

// Routes and the config they came from; swapped whole on reload. Streams route with the table
// current when their request filters finish.
struct RouteTable {
  std::shared_ptr<const config::Config> config;
};

// One worker's instance of a listener's filter chain. Streams keep a reference, so a chain
// replaced on reload lives until its last request ends.
class WorkerFilterChain : public std::enable_shared_from_this<WorkerFilterChain> {
 public:
  WorkerFilterChain(std::shared_ptr<const ListenerInfo> info, uint32_t worker_index);
  ~WorkerFilterChain();  // worker_destroy for each filter
  WorkerFilterChain(const WorkerFilterChain&) = delete;
  WorkerFilterChain& operator=(const WorkerFilterChain&) = delete;

  const ListenerInfo& info() const { return *info_; }
  size_t size() const { return workers_.size(); }
  const sluice_filter_plugin& hooks(size_t i) const { return info_->filters[i]->hooks(); }
  void* worker(size_t i) const { return workers_[i]; }
  const std::string& name(size_t i) const { return info_->filters[i]->name(); }
  // The entry's failure_mode (its PluginRef in the listener or route config).
  config::FailureMode failureMode(size_t i) const;
  // The chain a request matched to `route` runs: this listener chain when the route has no
  // filters of its own (or `route` is nullptr: context-path routing, no route matched), else
  // the route's chain for this listener on this worker (routes[].filters, FiltersMode).
  // Worker thread. Never null.
  std::shared_ptr<WorkerFilterChain> forRoute(const config::Route* route);

 private:
  std::shared_ptr<const ListenerInfo> info_;
  std::vector<void*> workers_;
};

class WorkerRuntime;

// One listener on one worker. Connections keep a reference: each new request takes the slot's
// current chain, so a reload reaches keep-alive connections at their next request, while a
// request in flight finishes on the chain it started with.
struct ListenerSlot {
  std::string name;
  std::shared_ptr<WorkerFilterChain> chain;
  evconnlistener* listener = nullptr;
  WorkerRuntime* runtime = nullptr;
  bool removed = false;  // its connections close after their current request
};

// A listener as a reload delivers it: `fd` >= 0 is a new listening socket for this worker (new
// listener or new address); -1 keeps the socket the worker has for that name.
struct ListenerUpdate {
  std::shared_ptr<const ListenerInfo> info;
  int fd = -1;
  // With fd == -1: the name of the slot whose socket carries over — the listener's own name,
  // or its old name when it was renamed on the same address.
  std::string keep;
};

class WorkerRuntime {
 public:
  explicit WorkerRuntime(event::Worker& worker);
  ~WorkerRuntime();

  event::Worker& worker() { return worker_; }
  upstream::ConnPool& pool() { return pool_; }

  // Makes the worker's listeners exactly `updates` (by name): new chains for changed ones, new
  // sockets where given, listeners absent from `updates` stop accepting and their connections
  // close after their current request.
  void applyListeners(const std::vector<ListenerUpdate>& updates);
  void setRoutes(std::shared_ptr<const RouteTable> routes) { routes_ = std::move(routes); }
  const config::Config& routes() const { return *routes_->config; }
  // The current table itself (a stream holds it while its matched route is in use).
  std::shared_ptr<const RouteTable> routeTable() const { return routes_; }
  // This worker's live streams, for post() from other threads (filter ABI 1.2).
  StreamRegistry& streams() { return streams_; }

  // Adds or replaces a cluster (a new balancer instance when the ClusterInfo differs). `queue`:
  // the cluster's wait queue (max_requests_per_host), the same object on every worker.
  void setCluster(std::shared_ptr<const upstream::ClusterInfo> info,
                  std::shared_ptr<const upstream::HostSet> hosts,
                  std::shared_ptr<upstream::WaitQueue> queue = nullptr);
  void removeCluster(const std::string& name);
  // The cluster by name, or nullptr. Streams hold the shared_ptr while they use it.
  std::shared_ptr<upstream::WorkerCluster> cluster(const std::string& name) const;

  // Connection bookkeeping.
  void release(DownstreamConnection* conn);  // deferred delete
  size_t connectionCount() const { return connections_.size(); }

  // Graceful drain: stop accepting, close idle connections, let busy ones finish their
  // current response (with Connection: close). `done` runs on this thread once no downstream
  // connection is left.
  void drain(std::function<void()> done);
  bool draining() const { return draining_; }
  // The drain timeout passed: closes every connection still open now — in-flight requests
  // (reset) and upgraded tunnels (both sockets) — so each is logged and `done` runs.
  void closeAll();

 private:
  static void onAccept(evconnlistener* l, evutil_socket_t fd, sockaddr* addr, int len, void* arg);
  void closeSlot(ListenerSlot& slot);
  void closeConnectionsOf(const ListenerSlot* slot);
  void maybeDrained();

  event::Worker& worker_;
  upstream::ConnPool pool_;
  StreamRegistry streams_;
  std::shared_ptr<const RouteTable> routes_;
  std::vector<std::shared_ptr<ListenerSlot>> listeners_;
  absl::flat_hash_map<std::string, std::shared_ptr<upstream::WorkerCluster>> clusters_;
  absl::flat_hash_map<DownstreamConnection*, std::unique_ptr<DownstreamConnection>> connections_;
  bool draining_ = false;
  std::function<void()> drained_;
};

}  // namespace sluice::proxy
