// What a worker runs on: its listeners (with their filter chains' per-worker instances), its
// clusters (per-worker balancer instances and host sets), its upstream connection pool and its
// downstream connections. Built and used on the worker's own thread only.
#pragma once

#include <event2/listener.h>
#include <sys/socket.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/accesslog/sink.h"
#include "core/config/config.h"
#include "core/event/worker.h"
#include "core/http/parser.h"
#include "core/plugin/plugin.h"
#include "core/proxy/connection_balancer.h"
#include "core/proxy/idle_parker.h"
#include "core/proxy/memory_trim.h"
#include "core/proxy/stream_registry.h"
#include "core/stats/families.h"
#include "core/tls/server_context.h"
#include "core/upstream/cluster.h"
#include "core/upstream/pool.h"

namespace sluice::proxy {

class DownstreamConnection;

// Immutable listener settings shared by all workers. A route's chain (routes[].filters) on a
// listener is a ListenerInfo too: a copy of the listener's with the composed chain in `filters`
// and `config.filters` (parallel: the entries as they apply, failure_mode included) and `route`
// set, so everything a stream reads from its chain's info is the listener's.
struct ListenerInfo {
  config::Listener config;
  std::vector<std::shared_ptr<plugin::FilterConfig>> filters;  // chain, request order
  std::string route;  // a route's chain: the route's name, else its prefix; "" = the listener's
  http::ParserLimits parser_limits;
  config::Limits limits;
  std::shared_ptr<const tls::ServerContext> tls;                    // null: plain TCP listener
  std::vector<std::shared_ptr<const accesslog::Sink>> access_logs;  // one line per request each
  std::shared_ptr<const stats::ListenerStats> stats;                // never null
};

// Routes and the config they came from; swapped whole on reload. Streams route with the table
// current when their request filters finish.
struct RouteTable {
  std::shared_ptr<const config::Config> config;
  // The chains of routes with filters of their own, built on the main thread
  // (core/server/route_chains.h): chains[listener name][i] is the chain of config->routes[i]
  // on that listener; null where that route runs the listener's chain. Listeners with no such
  // route are absent.
  absl::flat_hash_map<std::string, std::vector<std::shared_ptr<const ListenerInfo>>> chains;
};

// One worker's instance of a filter chain: a listener's, or a route's on that listener. Streams
// keep a reference, so a chain replaced on reload lives until its last request ends.
//
// Worker instances (worker_create) exist once per worker per filter config instance: a route
// chain that extends the listener's shares the listener chain's instances of the listener's
// filters (same state), and has its own only for the route's entries (their own config
// instances). Worker thread only.
class WorkerFilterChain : public std::enable_shared_from_this<WorkerFilterChain> {
 public:
  // One filter's worker instance; worker_destroy when the last chain holding it goes. The
  // FilterConfig is kept alive by every holder's ListenerInfo.
  struct Instance {
    const plugin::FilterConfig* config = nullptr;
    void* worker = nullptr;  // nullptr: worker_create failed
    ~Instance();
  };
  using Shared = absl::flat_hash_map<const plugin::FilterConfig*, std::shared_ptr<Instance>>;

  // Creates the worker instances of info's filters, taking those of `share` (may be null) whose
  // config instance is the same rather than creating new ones.
  WorkerFilterChain(std::shared_ptr<const ListenerInfo> info, uint32_t worker_index,
                    const Shared* share = nullptr);
  ~WorkerFilterChain();
  WorkerFilterChain(const WorkerFilterChain&) = delete;
  WorkerFilterChain& operator=(const WorkerFilterChain&) = delete;

  // What the runner calls for filter i, fixed for the chain's life (copied out of the plugin's
  // table and the worker instance once, when the chain is built, so that a stream reads them in
  // one place): the worker instance (nullptr: worker_create failed) and the hooks (nullptr
  // where the plugin has none).
  using HeadersHook = sluice_filter_status (*)(void*, sluice_stream*, int);
  using BodyHook = sluice_filter_status (*)(void*, sluice_stream*, const char*, size_t, int);
  struct Entry {
    void* worker = nullptr;
    void* (*stream_create)(void*, sluice_stream*) = nullptr;
    void (*stream_destroy)(void*) = nullptr;
    HeadersHook headers[2] = {nullptr, nullptr};  // by direction: request, response
    BodyHook body[2] = {nullptr, nullptr};
    void (*on_log)(void*, const sluice_stream*) = nullptr;
  };
  // size() entries, in chain order; valid while the chain lives.
  const Entry* entries() const { return entries_.data(); }
  // How many entries have a body hook in direction `d` (0: request, 1: response).
  uint8_t bodyHooks(int d) const { return body_hooks_[d]; }

  const ListenerInfo& info() const { return *info_; }
  size_t size() const { return instances_.size(); }
  const plugin::FilterConfig& filter(size_t i) const { return *info_->filters[i]; }
  const sluice_filter_plugin& hooks(size_t i) const { return info_->filters[i]->hooks(); }
  void* worker(size_t i) const { return instances_[i]->worker; }
  const std::string& name(size_t i) const { return info_->filters[i]->name(); }
  // Per-filter metric handles (stats::FilterStats; labels: the listener's name, each entry's
  // filter name), in chain order, resolved on first use (the registry's lock, once per chain on
  // each worker). Worker thread.
  const std::vector<stats::FilterStats>& filterStats() {
    return filter_stats_ ? *filter_stats_ : makeFilterStats();
  }
  // Whether the next stream of this chain measures its hook time (sluice_filter_duration_seconds):
  // one in kTimedEvery, the first one included, so that the clock is not read around every hook
  // of every request. Worker thread.
  static constexpr uint32_t kTimedEvery = 16;
  bool sampleTiming() { return timing_tick_++ % kTimedEvery == 0; }
  // The entry's failure_mode (its PluginRef in the listener or route config).
  config::FailureMode failureMode(size_t i) const;
  // The chain a request matched to `route` runs: this listener chain when the route has no
  // filters of its own (or `route` is nullptr: context-path routing, no route matched), else
  // the route's chain for this listener on this worker (routes[].filters, FiltersMode).
  // `route` must point into the route table the worker runs now (WorkerRuntime::routes(), as
  // router.h's route() returns it); O(1): its index in that table. Call it on the listener
  // chain (the one the stream took from its slot); a route chain returns itself. The result's
  // info() is the listener's (name, stats, access logs, limits) with the composed `filters`,
  // and info().route names the route. Worker thread. Never null.
  std::shared_ptr<WorkerFilterChain> forRoute(const config::Route* route);
  // forRoute(route), or nullptr when that chain has no filter (most listeners): one route
  // lookup, and no reference taken when there is nothing to run. Sets *foreign (when given)
  // when `route` is not of the route table attached to this chain — never, as long as
  // WorkerRuntime::setRoutes hands every table to every live chain: the caller then refuses the
  // request rather than run fewer filters than the route has (an auth filter). Worker thread.
  std::shared_ptr<WorkerFilterChain> nonEmptyForRoute(const config::Route* route,
                                                      bool* foreign = nullptr);

  // Attaches `routes` (WorkerRuntime calls this for every live listener chain when the table
  // changes): builds this worker's instances of the route chains of this listener; a route
  // chain whose ListenerInfo is unchanged keeps its instances (and their state). Worker thread.
  void setRoutes(const std::shared_ptr<const RouteTable>& routes);

 private:
  const std::vector<stats::FilterStats>& makeFilterStats();

  std::optional<std::vector<stats::FilterStats>> filter_stats_;
  std::vector<Entry> entries_;  // parallel to instances_
  uint8_t body_hooks_[2] = {0, 0};
  std::shared_ptr<const ListenerInfo> info_;
  uint32_t worker_index_;
  std::vector<std::shared_ptr<Instance>> instances_;  // parallel to info_->filters
  // The route's own chain in route_chains_, or nullptr when the route runs this one.
  const std::shared_ptr<WorkerFilterChain>* routeChain(const config::Route* route,
                                                       bool* foreign = nullptr);
  std::shared_ptr<const RouteTable> routes_;  // the table route_chains_ belong to
  std::vector<std::shared_ptr<WorkerFilterChain>> route_chains_;  // by route index; null = this
  bool warned_foreign_route_ = false;
  uint32_t timing_tick_ = 0;  // streams of this chain so far (sampleTiming)
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
  // `balancer`: shared by every worker's runtime and outliving them; null with one worker (no
  // connection is ever handed to another worker).
  explicit WorkerRuntime(event::Worker& worker, ConnectionBalancer* balancer = nullptr);
  ~WorkerRuntime();

  event::Worker& worker() { return worker_; }
  upstream::ConnPool& pool() { return pool_; }

  // Makes the worker's listeners exactly `updates` (by name): new chains for changed ones, new
  // sockets where given, listeners absent from `updates` stop accepting and their connections
  // close after their current request.
  void applyListeners(const std::vector<ListenerUpdate>& updates);
  // Swaps the route table and attaches it to every listener chain still alive on this worker
  // (slots' and those in-flight requests hold), so a route chain change reaches keep-alive
  // connections at their next request.
  void setRoutes(std::shared_ptr<const RouteTable> routes);
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
  // The cluster by name, or nullptr. Streams hold the shared_ptr while they use it. The last one
  // found is remembered (most requests name the same cluster as the one before).
  std::shared_ptr<upstream::WorkerCluster> cluster(std::string_view name) const;

  // Connection bookkeeping.
  void release(DownstreamConnection* conn);  // deferred delete
  // A connection one worker accepted and hands to another (ConnectionBalancer::pick chose it);
  // nothing has been read from `fd`.
  struct HandedOver {
    std::string listener;  // the accepting worker's slot name and its listener's address:
    std::string address;   // the target serves it on the slot with both
    int fd = -1;
    sockaddr_storage peer{};
    socklen_t peer_len = 0;
    uint32_t from = 0;                     // the accepting worker
    const ListenerSlot* origin = nullptr;  // its slot there (compared, never dereferenced here)
  };
  // Serves a handed-over connection on this worker's slot for the same listener, or, when it
  // has none (a reload has not reached this worker yet or renamed it here already) or drains,
  // hands it back to `from` (acceptReturned). Takes the fd.
  void acceptHandedOver(const HandedOver& h);
  // A connection this worker handed over and got back: served on its original slot, or
  // closed when that slot is gone or this worker drains (like a connection left in the accept
  // queue of a closed listener). Takes the fd.
  void acceptReturned(const HandedOver& h);
  // Registers a connection made outside accept (a parked one rebuilt); returns it.
  DownstreamConnection* adopt(std::unique_ptr<DownstreamConnection> conn);
  // Open downstream connections, parked ones included.
  size_t connectionCount() const { return connections_.size() + parker_.parkedCount(); }
  // A client connection opened on this worker (accepted or handed over) or closed (from its
  // object or from its parked record): the worker's count for the balancer and
  // sluice_worker_downstream_connections. Parking and rebuilding a connection change neither.
  void connectionOpened();
  void connectionClosed();
  // Where idle downstream connections wait to give up their buffers (idle_parker.h).
  IdleParker& idleParker() { return parker_; }
  MemoryTrim& memoryTrim() { return trim_; }

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
  // Hands `fd` to the worker ConnectionBalancer::pick names when that is not this one; true
  // when it did (the fd is no longer ours).
  bool handOff(ListenerSlot& slot, int fd, const sockaddr* addr, int len);
  void serve(std::shared_ptr<ListenerSlot> slot, int fd, sockaddr* addr, int len);
  void countChanged(size_t open);  // the balancer's count and the gauge
  void closeSlot(ListenerSlot& slot);
  void closeConnectionsOf(const ListenerSlot* slot);
  void maybeDrained();

  event::Worker& worker_;
  upstream::ConnPool pool_;
  StreamRegistry streams_;
  std::shared_ptr<const RouteTable> routes_;
  std::vector<std::shared_ptr<ListenerSlot>> listeners_;
  std::vector<std::weak_ptr<WorkerFilterChain>> chains_;  // every listener chain made here
  absl::flat_hash_map<std::string, std::shared_ptr<upstream::WorkerCluster>> clusters_;
  // cluster()'s last answer (null: none); reset whenever clusters_ changes.
  mutable const std::pair<const std::string, std::shared_ptr<upstream::WorkerCluster>>*
      last_cluster_ = nullptr;
  // Before connections_: they unlink from it as they are destroyed. Its destructor closes the
  // parked sockets (and uncounts them).
  IdleParker parker_;
  absl::flat_hash_map<DownstreamConnection*, std::unique_ptr<DownstreamConnection>> connections_;
  MemoryTrim trim_;  // malloc_trim once a burst of connections has closed
  ConnectionBalancer* balancer_;
  stats::Gauge worker_connections_;  // sluice_worker_downstream_connections{worker}
  size_t open_connections_ = 0;      // connectionOpened() minus connectionClosed()
  bool draining_ = false;
  std::function<void()> drained_;
};

}  // namespace sluice::proxy
