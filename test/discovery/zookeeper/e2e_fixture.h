// Shared pieces of the zookeeper discovery end-to-end tests: a real ZooKeeper server (one per
// test suite), the real core/sluice with libzookeeper.so and libround_robin.so, three echo
// backends "a", "b", "c", a client that writes the registry, and client loops that count which
// backend served each request. Deadlines here are liveness bounds, not timing assertions,
// except where a test says the bound is the requirement.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/discovery/zookeeper/zk_server.h"
#include "test/harness/harness.h"
#include "tools/zk/zk_client.h"

namespace sluice::test {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Polls `done` every 5 ms until it holds (true) or `timeout` passes (false).
bool waitUntil(const std::function<bool()>& done, milliseconds timeout);

// One `discovery:` entry for the zookeeper plugin, `config` being the inside of its config map
// (e.g. "servers: '127.0.0.1:2181', root: /x").
std::string zkEntry(const std::string& config);

// Requests GET `path`N on keep-alive connections from `threads` threads until stopped, counting
// which backend served each (X-Backend) and every failure (anything but a complete 200).
class ClientLoop {
 public:
  ClientLoop(int port, std::string path, int threads);
  ~ClientLoop() { stop(); }
  ClientLoop(const ClientLoop&) = delete;
  ClientLoop& operator=(const ClientLoop&) = delete;

  void stop();
  std::map<std::string, int> served();
  void resetCounts();
  Clock::time_point lastServedBy(const std::string& backend);
  int total() const { return total_; }
  std::vector<std::string> failures();

 private:
  void run();

  int port_;
  std::string path_;
  std::atomic<bool> stop_{false};
  std::atomic<int> total_{0};
  std::mutex mutex_;
  std::map<std::string, int> served_;
  std::map<std::string, Clock::time_point> last_;
  std::vector<std::string> failures_;
  std::vector<std::thread> threads_;
};

class ZkGatewayTest : public ::testing::Test {
 protected:
  ZkGatewayTest() : a_("a"), b_("b"), c_("c") {}
  static void SetUpTestSuite() { server_ = std::make_unique<ZkServer>(); }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override;

  // "servers: '127.0.0.1:PORT', root: /<test name>, session_timeout_ms: 4000" plus `more`.
  std::string zkConfig(const std::string& more = "") const;
  // Starts sluice (2 workers, listener 127.0.0.1:port_ with context path /gateway, admin on
  // admin_port_) with `entries` (zkEntry(...) texts) as its discovery list.
  void startSluice(const std::vector<std::string>& entries);
  void startSluice() { startSluice({zkEntry(zkConfig())}); }
  // Rewrites the config with `entries` (same ports) and sends SIGHUP; true once sluice logged
  // the reload as applied.
  bool reloadWith(const std::vector<std::string>& entries);

  // Registers `backend` under root()/cluster in the sluice layout, as an ephemeral node of its
  // own session (like a real backend); deregister() closes that session.
  void registerBackend(const std::string& cluster, const EchoBackend& backend,
                       const std::string& data = "");
  void deregister(const std::string& cluster, const EchoBackend& backend);

  // One request on a fresh connection: "status backend", e.g. "200 a", "503 ", "404 ".
  std::string get(const std::string& path);
  // `n` requests on one keep-alive connection; how many each backend served ("!" = failed).
  std::map<std::string, int> burst(const std::string& path, int n);
  size_t countOutput(const std::string& text);
  const std::string& root() const { return root_; }

  static std::unique_ptr<ZkServer> server_;
  EchoBackend a_, b_, c_;
  std::unique_ptr<zk::ZkClient> zk_;
  std::map<std::string, std::unique_ptr<zk::ZkClient>> sessions_;  // by node path
  std::string root_;
  int port_ = 0;
  int admin_port_ = 0;
  std::unique_ptr<TempConfig> config_;
  std::unique_ptr<Sluice> sluice_;
  int reloads_ = 0;

 private:
  std::string configText(const std::vector<std::string>& entries) const;
};

}  // namespace sluice::test
