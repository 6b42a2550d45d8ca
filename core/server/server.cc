#include "core/server/server.h"

#include <signal.h>
#include <unistd.h>

#include <ctime>
#include <thread>

#include "core/accesslog/registry.h"
#include "core/common/log.h"
#include "core/event/main_thread.h"
#include "core/server/admin.h"
#include "core/server/file_watch.h"
#include "core/server/listen.h"
#include "core/stats/registry.h"

namespace sluice::server {
namespace {

uint32_t workerCount(const config::Config& c) {
  if (c.workers != 0) return c.workers;
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace

Server::Server() : base_(event_base_new()) { event::installMainThread(base_); }

Server::~Server() {
  stopAllDiscovery();
  watch_.reset();
  cert_watch_.reset();
  for (auto& w : workers_) {
    w->stop();
    w->join();
  }
  // Runtimes hold plugin instances: destroy them (on this thread, workers stopped) before the
  // plugin configs and libraries in built_.
  runtimes_.clear();
  workers_.clear();
  clusters_.reset();
  admin_.reset();
  event::uninstallMainThread();
  for (::event* e : signal_events_) event_free(e);
  if (drain_timer_ != nullptr) event_free(drain_timer_);
  if (access_log_timer_ != nullptr) event_free(access_log_timer_);
  built_ = Built();
  event_base_free(base_);
}

bool Server::openListener(const config::Listener& l, const OwnAddresses& own, std::vector<int>* fds,
                          std::string* error) {
  const int backlog = l.backlog != 0 ? static_cast<int>(l.backlog) : defaultBacklog();
  if (listenOn(l.address, backlog, workers_.size(), own, fds, error)) return true;
  *error = l.mark.str() + ": listener '" + l.name + "': " + *error;
  return false;
}

void Server::closeFds(std::map<std::string, std::vector<int>>* fds) {
  for (auto& [name, list] : *fds) {
    for (int f : list) close(f);
  }
  fds->clear();
}

int Server::run(ConfigSource source, Built built, std::unique_ptr<plugin::Loader> loader) {
  source_ = std::move(source);
  built_ = std::move(built);
  loader_ = std::move(loader);
  started_at_ = static_cast<uint64_t>(time(nullptr));
  const config::Config& cfg = *built_.config;
  const uint32_t n = workerCount(cfg);
  for (uint32_t i = 0; i < n; ++i) workers_.push_back(std::make_unique<event::Worker>(i));

  // The file watches before any socket: a change made as soon as a listener accepts (the
  // kernel queues connections from bind on) must not be missed.
  updateWatch();
  updateCertWatch();
  // Every listener's sockets, each address taken exclusively (listen.h): a second sluice
  // started on an address this one serves stops here instead of sharing it.
  std::map<std::string, std::vector<int>> fds;
  OwnAddresses own;
  for (const auto& l : built_.listeners) {
    std::string error;
    if (!openListener(l->config, own, &fds[l->config.name], &error)) {
      SLUICE_LOG(kError, error);
      SLUICE_LOG(kError, "sluice not started: a listener address cannot be taken");
      closeFds(&fds);
      return 1;
    }
    own.all.push_back(l->config.address);
    listener_address_[l->config.name] = l->config.address;
  }
  if (!cfg.admin_address.empty()) {
    admin_ = std::make_unique<Admin>(*this);
    std::string error;
    // evhttp's own bind refuses a held address too, but says only "Address already in use";
    // the check first names the holder the way listener errors do.
    if (!checkBindable(cfg.admin_address, own, &error) ||
        !admin_->listen(cfg.admin_address, &error)) {
      SLUICE_LOG(kError, cfg.admin_mark.str(), ": admin: ", error);
      SLUICE_LOG(kError, "sluice not started: the admin address cannot be taken");
      closeFds(&fds);
      return 1;
    }
  }
  accesslog::Registry::global().start();
  access_log_timer_ = event_new(base_, -1, EV_PERSIST, &Server::onAccessLogTimer, this);
  timeval second{1, 0};
  event_add(access_log_timer_, &second);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) {
    ::event* e = evsignal_new(base_, sig, &Server::onSignal, this);
    event_add(e, nullptr);
    signal_events_.push_back(e);
  }
  signal(SIGPIPE, SIG_IGN);

  clusters_ = std::make_unique<ClusterManager>(
      [this](std::function<void(proxy::WorkerRuntime&)> fn) { postAll(std::move(fn)); }, base_);
  runtimes_.resize(n);
  if (n > 1) {
    balancer_ = std::make_unique<proxy::ConnectionBalancer>(
        n, [this](uint32_t i, std::function<void(proxy::WorkerRuntime&)> fn) {
          postTo(i, std::move(fn));
        });
  }
  // Every thread of ours writes its metrics into its own store (no contention, no RMW).
  stats::Registry& registry = stats::defaultRegistry();
  registry.bindThread(registry.newThreadStore());
  for (uint32_t i = 0; i < n; ++i) {
    event::Worker* w = workers_[i].get();
    stats::Store* store = registry.newThreadStore();
    w->start([this, w, i, store, &registry] {
      registry.bindThread(store);
      runtimes_[i] = std::make_unique<proxy::WorkerRuntime>(*w, balancer_.get());
    });
  }
  // Everything reaches the workers the way a reload does: clusters, then routes and listeners.
  std::vector<ClusterTemplate> templates;
  for (const auto& d : built_.discovery) templates.push_back(d.cluster_template);
  std::vector<std::string> errors;
  clusters_->reconcile(built_.clusters, templates, &errors);
  for (const std::string& e : errors) SLUICE_LOG(kWarn, e);
  // Discovery first, and what it published while starting applied at once, so the workers know
  // the discovered clusters before their listeners accept the first request.
  for (size_t i = 0; i < built_.discovery.size(); ++i) startDiscovery(i);
  for (auto& sink : sinks_) {
    if (sink != nullptr) sink->flush();
  }
  applyToWorkers(fds, {}, 0);

  for (const auto& l : built_.listeners) {
    SLUICE_LOG(kInfo, "listener '", l->config.name, "' on ", l->config.address,
               l->config.context_path.empty() ? "" : " context path ", l->config.context_path, " (",
               l->filters.size(), " filters)");
  }
  SLUICE_LOG(kInfo, "sluice started: ", n, " workers, ", clusters_->clusters().size(),
             " clusters (", built_.discovery.size(), " discovery sources)",
             admin_ != nullptr ? ", admin on " : "", cfg.admin_address);
  event_base_loop(base_, EVLOOP_NO_EXIT_ON_EMPTY);
  stopAllDiscovery();
  SLUICE_LOG(kInfo, "sluice stopped");
  return 0;
}

void Server::postAll(std::function<void(proxy::WorkerRuntime&)> fn) {
  auto shared = std::make_shared<std::function<void(proxy::WorkerRuntime&)>>(std::move(fn));
  for (size_t i = 0; i < workers_.size(); ++i) {
    postTo(i, [shared](proxy::WorkerRuntime& rt) { (*shared)(rt); });
  }
}

void Server::postTo(size_t i, std::function<void(proxy::WorkerRuntime&)> fn) {
  workers_[i]->post([this, i, fn = std::move(fn)] {
    if (runtimes_[i] != nullptr) fn(*runtimes_[i]);
  });
}

void Server::startDiscovery(size_t i) {
  if (sinks_.size() <= i) sinks_.resize(i + 1);
  const BuiltDiscovery& d = built_.discovery[i];
  auto sink = std::make_unique<DiscoverySinkImpl>(
      base_, d.plugin->name(), [this, i](const Snapshot& snapshot) {
        if (i >= built_.discovery.size()) return;
        std::vector<std::string> errors;
        clusters_->applySnapshot(i, built_.discovery[i].cluster_template, snapshot, &errors);
        for (const std::string& e : errors) SLUICE_LOG(kWarn, "discovery: ", e);
      });
  if (d.plugin->hooks().start(d.plugin->config(), sink->handle()) != 0) {
    d.plugin->hookFailed(plugin::Hook::kStart);
    SLUICE_LOG(kError, "discovery '", d.plugin->name(), "' failed to start; its clusters keep ",
               "their last endpoints");
    return;
  }
  sinks_[i] = std::move(sink);
}

void Server::stopDiscovery(size_t i) {
  if (i >= sinks_.size() || sinks_[i] == nullptr) return;
  sinks_[i]->close();
  const BuiltDiscovery& d = built_.discovery[i];
  d.plugin->hooks().stop(d.plugin->config());
  sinks_[i].reset();
}

void Server::stopAllDiscovery() {
  for (size_t i = 0; i < sinks_.size(); ++i) stopDiscovery(i);
}

void Server::onSignal(evutil_socket_t sig, short, void* arg) {
  auto* self = static_cast<Server*>(arg);
  if (sig == SIGHUP) {
    self->reload("SIGHUP", false);
    return;
  }
  if (sig == SIGUSR1) {
    std::vector<std::string> paths = accesslog::Registry::global().openPaths();
    SLUICE_LOG(kInfo, "SIGUSR1: reopening ", paths.size(), " access log files");
    accesslog::Registry::global().requestReopen();
    return;
  }
  if (sig == SIGUSR2) {
    SLUICE_LOG(kInfo, "SIGUSR2: giving free heap memory back (malloc_trim on every worker)");
    self->postAll([](proxy::WorkerRuntime& rt) { rt.memoryTrim().trimNow(); });
    return;
  }
  self->beginDrain(sig == SIGTERM ? "SIGTERM" : "SIGINT", true);
}

void Server::onAccessLogTimer(evutil_socket_t, short, void*) {
  accesslog::Registry::global().reportDrops();
}

void Server::beginDrain(const char* why, bool exit) {
  if (draining_) {
    if (!exit) return;  // POST /drain again: the drain goes on as it is
    if (!exit_when_drained_) {
      // A signal after POST /drain: exit once drained, which may be now.
      exit_when_drained_ = true;
      const bool done = drained_workers_ == workers_.size();
      SLUICE_LOG(kInfo, why,
                 " during a drain: ", done ? "drained already, exiting" : "exiting once drained");
      if (done) {
        event_base_loopbreak(base_);
      } else if (drain_expired_ && !evtimer_pending(drain_timer_, nullptr)) {
        // The drain timeout passed long ago and a worker still did not report: as after a
        // signal's own drain, wait one more second at most.
        timeval tv{1, 0};
        evtimer_add(drain_timer_, &tv);
      }
      return;
    }
    SLUICE_LOG(kWarn, why, " again: stopping now");
    event_base_loopbreak(base_);
    return;
  }
  draining_ = true;
  exit_when_drained_ = exit;
  const uint32_t ms = built_.config->drain_timeout_ms;
  SLUICE_LOG(kInfo, why, ": draining (up to ", ms, " ms): no new connections, in-flight ",
             "requests finish");
  if (admin_ != nullptr) admin_->setDraining();
  watch_.reset();
  cert_watch_.reset();
  drain_timer_ = evtimer_new(base_, &Server::onDrainTimeout, this);
  timeval tv{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  evtimer_add(drain_timer_, &tv);
  for (size_t i = 0; i < workers_.size(); ++i) {
    workers_[i]->post([this, i] {
      runtimes_[i]->drain([this] { event::postToMain([this] { workerDrained(); }); });
    });
  }
}

void Server::workerDrained() {
  if (++drained_workers_ == workers_.size()) {
    SLUICE_LOG(kInfo,
               drain_expired_ ? "drained: the remaining connections were closed"
                              : "drained: every in-flight request finished",
               exit_when_drained_ ? "" : "; staying up (POST /drain) until SIGTERM");
    if (exit_when_drained_) {
      event_base_loopbreak(base_);
    } else if (drain_timer_ != nullptr) {
      evtimer_del(drain_timer_);
    }
  }
}

void Server::onDrainTimeout(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Server*>(arg);
  if (self->drain_expired_) {
    if (!self->exit_when_drained_) {
      SLUICE_LOG(kWarn, "drain timeout: workers did not close their connections in time");
      return;
    }
    SLUICE_LOG(kWarn, "drain timeout: workers did not close their connections in time; exiting");
    event_base_loopbreak(self->base_);
    return;
  }
  self->drain_expired_ = true;
  SLUICE_LOG(kWarn, "drain timeout: closing ", self->workers_.size() - self->drained_workers_,
             " workers' remaining connections (requests in flight, tunnels)");
  // Each worker closes (and logs) what it still has, then reports drained; a second, short
  // timer bounds the wait for a worker that cannot.
  self->postAll([](proxy::WorkerRuntime& rt) { rt.closeAll(); });
  timeval tv{1, 0};
  evtimer_add(self->drain_timer_, &tv);
}

}  // namespace sluice::server
