// The running proxy: the main thread's event loop (signals, admin listener, discovery, config
// reloads), the workers, and graceful drain. Main thread.
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/event/worker.h"
#include "core/proxy/runtime.h"
#include "core/server/bootstrap.h"
#include "core/server/cluster_manager.h"
#include "core/server/discovery_sink.h"
#include "core/server/listen.h"

namespace sluice::server {

class Admin;
class FileWatch;

// Where the configuration comes from, to read it again on reload.
struct ConfigSource {
  std::string path;      // "" = the embedded text
  std::string embedded;  // used when path is empty
};

// What a reload did (or, for a dry run, would do).
struct ReloadResult {
  bool ok = false;
  bool dry_run = false;
  uint64_t version = 0;             // running config version afterwards
  std::vector<std::string> errors;  // "file:line:col: reason" lines when !ok
  std::vector<std::string>
      changes;  // human-readable, e.g. "cluster 'a': balancer round_robin → p2c"
};

class Server {
 public:
  Server();
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens every listening socket, starts the workers and runs the main loop until SIGTERM/
  // SIGINT have drained the workers (or drain_timeout_ms passed). Returns the exit code:
  // 0 after a drain, 1 when start-up failed (the reason is logged).
  int run(ConfigSource source, Built built, std::unique_ptr<plugin::Loader> loader);

  // Reads the config again and, unless `dry_run`, swaps it in: parse → validate → build off the
  // workers → post to every worker. Any failure changes nothing (the old config keeps serving).
  // `trigger` names the cause in logs ("SIGHUP", "admin", "file watch").
  ReloadResult reload(const std::string& trigger, bool dry_run);

  // Graceful drain without exiting (admin POST /drain): listeners close, idle keep-alive
  // connections close, in-flight requests finish (responses carry Connection: close) up to
  // drain_timeout_ms, /ready answers 503; the process then stays up, serving only the admin
  // endpoint, until SIGTERM/SIGINT (which exits at once when the drain has ended). `why` names
  // the trigger in logs. A second call does nothing.
  void drain(const char* why) { beginDrain(why, false); }

  // For the admin endpoint.
  const plugin::Loader& loader() const { return *loader_; }
  const std::vector<std::unique_ptr<event::Worker>>& workers() const { return workers_; }
  const Built& built() const { return built_; }
  const ClusterManager& clusterManager() const { return *clusters_; }
  event_base* base() const { return base_; }
  uint64_t startedAtUnix() const { return started_at_; }
  uint64_t configVersion() const { return version_; }
  const ReloadResult& lastReload() const { return last_reload_; }
  uint64_t lastReloadAt() const { return last_reload_at_; }
  uint64_t reloadsOk() const { return reloads_ok_; }
  uint64_t reloadsFailed() const { return reloads_failed_; }
  // Time from a reload's start to the last worker running the new snapshot, in µs, newest last
  // (the last 1000 reloads).
  const std::deque<uint64_t>& reloadApplyTimes() const { return apply_us_; }

 private:
  // One socket per worker on `l`'s address (listenOn()); false with *error ("file:line:col:
  // listener 'x': cannot bind ...") when the address cannot be taken.
  bool openListener(const config::Listener& l, const OwnAddresses& own, std::vector<int>* fds,
                    std::string* error);
  // The addresses this process listens on, for a reload to `next`: the ones of listeners that
  // will not keep their sockets are joinable.
  OwnAddresses ownAddresses(const std::map<std::string, std::string>& keep) const;
  void closeFds(std::map<std::string, std::vector<int>>* fds);
  static void onSignal(evutil_socket_t sig, short, void* arg);
  static void onDrainTimeout(evutil_socket_t, short, void* arg);
  static void onAccessLogTimer(evutil_socket_t, short, void* arg);
  // Starts the drain (or, during one, makes it end the process: `exit` from a signal).
  void beginDrain(const char* why, bool exit);
  void workerDrained();
  void postAll(std::function<void(proxy::WorkerRuntime&)> fn);
  // Runs `fn` on worker `i` with its runtime (not at all once the runtime is gone).
  void postTo(size_t i, std::function<void(proxy::WorkerRuntime&)> fn);
  void applyToWorkers(const std::map<std::string, std::vector<int>>& new_fds,
                      const std::map<std::string, std::string>& keep, uint64_t started_us);
  std::map<std::string, std::string> keptSockets(const Built& next) const;
  void startDiscovery(size_t index);
  void stopDiscovery(size_t index);
  void stopAllDiscovery();
  void updateWatch();
  // Watches the running config's TLS files (core/server/tls_watch.cc).
  void updateCertWatch();

  event_base* base_;
  ConfigSource source_;
  Built built_;
  std::unique_ptr<plugin::Loader> loader_;
  std::vector<std::unique_ptr<event::Worker>> workers_;
  // Shared by the runtimes (outlives them); null with one worker.
  std::unique_ptr<proxy::ConnectionBalancer> balancer_;
  std::vector<std::unique_ptr<proxy::WorkerRuntime>> runtimes_;  // touched on their workers only
  std::vector<::event*> signal_events_;
  ::event* drain_timer_ = nullptr;
  ::event* access_log_timer_ = nullptr;  // reports dropped access log lines (every second)
  std::unique_ptr<Admin> admin_;
  std::unique_ptr<ClusterManager> clusters_;
  std::unique_ptr<FileWatch> watch_;       // watch_config
  std::unique_ptr<FileWatch> cert_watch_;  // TLS files (tls_watch.cc)
  std::string tls_fingerprint_;            // of the running config's TLS settings and files
  // One per discovery entry (index = its position in built_.discovery); null when not running.
  std::vector<std::unique_ptr<DiscoverySinkImpl>> sinks_;
  std::map<std::string, std::string> listener_address_;  // name → address it is bound to
  bool draining_ = false;
  bool exit_when_drained_ = false;  // a signal (not POST /drain) asked for the drain
  bool drain_expired_ = false;      // drain_timeout_ms passed: the workers were told to close all
  size_t drained_workers_ = 0;
  uint64_t started_at_ = 0;
  uint64_t version_ = 1;
  ReloadResult last_reload_;
  uint64_t last_reload_at_ = 0;
  uint64_t reloads_ok_ = 0;
  uint64_t reloads_failed_ = 0;
  std::deque<uint64_t> apply_us_;
};

}  // namespace sluice::server
