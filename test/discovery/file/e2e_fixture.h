// Shared pieces of the `file` discovery end-to-end tests: the real core/sluice with libfile.so
// and libround_robin.so, three echo backends "a", "b", "c", an endpoints file rewritten
// atomically (temp + rename), and clients that count which backend served each request.
//
// The poll interval is 100 ms unless FILE_DISCOVERY_INTERVAL_MS says otherwise (e.g.
// `--test_env=FILE_DISCOVERY_INTERVAL_MS=1000` to run with the default). Deadlines here are
// liveness bounds, not timing assertions.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/harness/harness.h"

namespace sluice::test {

using Clock = std::chrono::steady_clock;

// The poll interval the tests configure (ms).
int intervalMs();

// Polls `done` every 5 ms until it holds (true) or `timeout` passes (false).
bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);

// Config template variables locating the plugins: FILE_DIR and RR_DIR (runfile directories).
std::map<std::string, std::string> pluginDirs();

// A config with one `file` discovery entry on `endpoints` (2 workers, listener on
// 127.0.0.1:`port` with context path /gateway, round_robin for discovered clusters).
std::string oneSourceConfig(const std::string& endpoints, int port, int interval_ms);

// Requests GET `path`N on keep-alive connections from `threads` threads until stopped, counting
// which backend served each (X-Backend) and every failure (anything but a complete 200).
class ClientLoop {
 public:
  ClientLoop(int port, std::string path, int threads);
  ~ClientLoop() { stop(); }
  ClientLoop(const ClientLoop&) = delete;
  ClientLoop& operator=(const ClientLoop&) = delete;

  // Joins the threads (each finishes its current request).
  void stop();
  // Requests served per backend since the start or the last resetCounts().
  std::map<std::string, int> served();
  void resetCounts();
  // When `backend` last served a request (the epoch if never).
  Clock::time_point lastServedBy(const std::string& backend);
  // Requests completed or failed so far.
  int total() const { return total_; }
  // One line per failed request.
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

// Fixture: the backends, the endpoints file and the proxy.
class FileGatewayTest : public ::testing::Test {
 protected:
  FileGatewayTest() : a_("a"), b_("b"), c_("c") {}

  // Writes the endpoints file atomically: "clusters:\n" + `clusters` (the map's YAML lines).
  void writeEndpoints(const std::string& clusters) {
    ASSERT_TRUE(writeFile(endpoints_, "clusters:\n" + clusters));
  }
  // "[addr, addr]" of `backends`.
  static std::string list(std::initializer_list<const EchoBackend*> backends);

  // Starts sluice with oneSourceConfig(endpoints_, a free port, intervalMs()); check
  // sluice_->ready().
  void startSluice();
  // Starts sluice with `config_template` (${PORT}, ${FILE_DIR}, ${RR_DIR} and `vars` filled in)
  // listening on port_.
  void startSluice(const std::string& config_template, std::map<std::string, std::string> vars);

  // One request on a fresh connection: "status backend", e.g. "200 a", "503 ", "404 ".
  std::string get(const std::string& path);
  // `n` requests on one keep-alive connection; how many each backend served ("!" = failed).
  std::map<std::string, int> burst(const std::string& path, int n);
  // How often `text` occurs in sluice's output so far.
  size_t countOutput(const std::string& text);

  EchoBackend a_, b_, c_;
  std::string endpoints_ = uniqueTmpPath("endpoints.yaml");
  int port_ = 0;
  std::unique_ptr<TempConfig> config_;
  std::unique_ptr<Sluice> sluice_;
};

}  // namespace sluice::test
