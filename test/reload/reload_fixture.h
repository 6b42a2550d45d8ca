// Shared pieces of the reload tests: a sluice started from a YAML template whose file the test
// rewrites and reloads (SIGHUP or POST /reload), keep-alive load clients that count every failure,
// and readers for the admin endpoint (/stats, /clusters, /config). Loopback only, nothing mocked.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/harness/harness.h"

namespace sluice::test {

// How a reload is triggered.
enum class Trigger { kSighup, kAdmin };

// A running sluice serving a YAML template after substitution of ${PORT} (listener port),
// ${ADMIN} (admin port), ${PLUGINS} (flow list of the filters and balancers runfiles dirs) and
// `vars`. The same ports and vars stay for every rewrite(). Retries start-up with new ports when
// a port was taken meanwhile. ADD_FAILURE()s when it never comes up.
class ReloadGateway {
 public:
  explicit ReloadGateway(const std::string& yaml_template,
                         std::map<std::string, std::string> vars = {});
  bool ready() const { return ready_; }
  int port() const { return port_; }
  int adminPort() const { return admin_port_; }
  const std::string& configPath() const { return config_->path(); }
  Process& process() { return *process_; }

  // `yaml_template` with the start-up vars plus `vars` substituted.
  std::string render(const std::string& yaml_template,
                     const std::map<std::string, std::string>& vars = {}) const;
  // Writes a new config (atomically) from `yaml_template`, with the start-up vars plus `vars`.
  bool rewrite(const std::string& yaml_template,
               const std::map<std::string, std::string>& vars = {});
  // POST /reload (?dry_run=1): the admin's answer.
  Response adminReload(bool dry_run = false);
  // Triggers a reload that must succeed and waits until the new version runs on every worker
  // (its "config version N running on all" log line). Returns the new version, 0 on failure
  // (with a test failure saying why).
  uint64_t reload(Trigger trigger);
  // Waits for the log line saying `version` runs on every worker.
  bool waitApplied(uint64_t version, int timeout_ms = 10000);
  // Polls /stats until `key` reaches at least `value`.
  bool waitStat(const std::string& key, uint64_t value, int timeout_ms = 10000);
  uint64_t stat(const std::string& key);

 private:
  std::map<std::string, std::string> vars_;
  std::unique_ptr<TempConfig> config_;
  std::unique_ptr<Process> process_;
  int port_ = 0;
  int admin_port_ = 0;
  bool ready_ = false;
};

// `plugin_paths` value: the filters and balancers runfiles directories (plus `extra` first).
std::string pluginPaths(const std::string& extra = "");

// GET /stats parsed as {"name": number}; empty on failure.
std::map<std::string, uint64_t> adminStats(int admin_port);
// GET `path` on the admin port: the body ("" on failure).
std::string adminGet(int admin_port, const std::string& path);

// Values of header `name` the echo backend says it received (its JSON "headers" list).
std::vector<std::string> echoHeaderValues(const std::string& body, const std::string& name);

// A host of a cluster as /clusters shows it.
struct HostStat {
  std::string address;
  uint64_t weight = 0;
  bool healthy = false;
  uint64_t active = 0;
  uint64_t total = 0;
};
struct ClusterStat {
  bool found = false;
  std::string balancer;
  std::vector<HostStat> hosts;
  uint64_t total() const;
};
ClusterStat clusterStat(int admin_port, const std::string& cluster);

// Share of each host (by address) of the requests `cluster` picked while at least `requests`
// more went through it (someone else must be sending them). Empty on timeout.
std::map<std::string, double> measureShares(int admin_port, const std::string& cluster,
                                            uint64_t requests, int timeout_ms = 20000);

// `connections` threads, each with its own keep-alive connection, sending GET `path` (with
// `headers`) back to back until stop(). A response that is incomplete, not 2xx, or that ends the
// keep-alive connection, a send that fails, or a connect that fails is a failure (kept as text);
// the client then reconnects and goes on. With `Mode::kFresh` every request goes on a new
// connection (Connection: close), to see new connections accepted throughout.
class LoadClients {
 public:
  enum class Mode { kKeepAlive, kFresh };
  LoadClients(int port, int connections, std::string path, Headers headers = {},
              Mode mode = Mode::kKeepAlive);
  ~LoadClients();
  void stop();
  uint64_t ok() const { return ok_.load(); }
  uint64_t failures() const { return failures_.load(); }
  // Up to 10 failure descriptions.
  std::vector<std::string> failureSamples() const;
  // How many responses carried each value of response header `name` (set by watchHeader()).
  std::map<std::string, uint64_t> headerValues() const;
  // Counts the values of response header `name` ("" = absent) from now on.
  void watchHeader(const std::string& name);
  // Good responses since watchHeader(): the sum of headerValues().
  uint64_t okSinceWatch() const;
  // Waits until at least `n` more responses arrived.
  bool waitResponses(uint64_t n, int timeout_ms = 10000) const;

 private:
  void run(int index);
  void fail(const std::string& what);

  int port_;
  Mode mode_;
  std::string request_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> ok_{0};
  std::atomic<uint64_t> failures_{0};
  mutable std::mutex mu_;
  std::vector<std::string> samples_;
  std::string header_;
  std::map<std::string, uint64_t> header_values_;
  uint64_t ok_at_watch_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace sluice::test
