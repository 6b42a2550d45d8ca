// The running proxy: the main thread's event loop (signals, admin listener), the workers, and
// graceful drain. Main thread.
#pragma once

#include <event2/event.h>

#include <memory>
#include <string>
#include <vector>

#include "core/event/worker.h"
#include "core/proxy/runtime.h"
#include "core/server/bootstrap.h"
#include "core/server/cluster_manager.h"
#include "core/server/discovery_sink.h"

namespace sluice::server {

class Admin;

class Server {
 public:
  Server();
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens every listening socket, starts the workers and runs the main loop until SIGTERM/
  // SIGINT have drained the workers (or drain_timeout_ms passed). Returns the exit code:
  // 0 after a drain, 1 when start-up failed (the reason is logged).
  int run(Built built, std::unique_ptr<plugin::Loader> loader);

  // For the admin endpoint.
  const std::vector<std::unique_ptr<event::Worker>>& workers() const { return workers_; }
  const Built& built() const { return built_; }
  const ClusterManager& clusterManager() const { return *clusters_; }
  event_base* base() const { return base_; }
  uint64_t startedAtUnix() const { return started_at_; }

 private:
  bool openListeners(uint32_t workers, std::vector<std::vector<int>>* fds);
  static void onSignal(evutil_socket_t sig, short, void* arg);
  static void onDrainTimeout(evutil_socket_t, short, void* arg);
  void beginDrain(const char* why);
  void workerDrained();
  void postAll(std::function<void(proxy::WorkerRuntime&)> fn);
  void startDiscovery();
  void stopDiscovery();

  event_base* base_;
  Built built_;
  std::unique_ptr<plugin::Loader> loader_;
  std::vector<std::unique_ptr<event::Worker>> workers_;
  std::vector<std::unique_ptr<proxy::WorkerRuntime>> runtimes_;  // touched on their workers only
  std::vector<::event*> signal_events_;
  ::event* drain_timer_ = nullptr;
  std::unique_ptr<Admin> admin_;
  std::unique_ptr<ClusterManager> clusters_;
  std::vector<std::unique_ptr<DiscoverySinkImpl>> sinks_;
  std::vector<bool> discovery_started_;
  bool draining_ = false;
  size_t drained_workers_ = 0;
  uint64_t started_at_ = 0;
};

}  // namespace sluice::server
