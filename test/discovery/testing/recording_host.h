// Test helper for discovery plugins: a host table whose log lines and discovery sink are
// recorded, so tests call a plugin's classes directly (no dlopen, no sluice) and see what it
// logged and published. Thread-safe: a plugin's own thread logs and publishes while the test
// waits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/api/discovery.h"
#include "core/api/sdk/discovery.h"
#include "core/api/sdk/host.h"

namespace sluice::testing {

// What one publish() carried: cluster name → "addr" or "addr w=N zone=Z k=v ..." entries.
using PublishedSnapshot = std::map<std::string, std::vector<std::string>>;

class RecordingHost {
 public:
  RecordingHost();
  RecordingHost(const RecordingHost&) = delete;
  RecordingHost& operator=(const RecordingHost&) = delete;

  sdk::Host host() const { return sdk::Host(&api_); }
  sdk::Sink sink() {
    return sdk::Sink(&discovery_api_, reinterpret_cast<sluice_discovery_sink*>(this));
  }
  // The raw table, for calling the plugin's C hooks (config_create reads YAML through `config`).
  const sluice_host_api* raw(const sluice_config_api* config) {
    api_.config = config;
    return &api_;
  }
  sluice_discovery_sink* sinkHandle() { return reinterpret_cast<sluice_discovery_sink*>(this); }

  std::vector<PublishedSnapshot> published() const;
  size_t publishCount() const;
  // The last snapshot published (empty when none).
  PublishedSnapshot last() const;
  // Waits until the last published snapshot satisfies `pred`; false on timeout.
  bool waitFor(const std::function<bool(const PublishedSnapshot&)>& pred,
               std::chrono::milliseconds timeout);
  // Waits until more than `count` snapshots were published; false on timeout.
  bool waitForPublish(size_t count, std::chrono::milliseconds timeout);
  // When the n-th publish (0-based) happened.
  std::chrono::steady_clock::time_point publishTime(size_t n) const;

  std::vector<std::string> logs() const;
  size_t countLogs(const std::string& text) const;
  // Waits until a log line contains `text`; false on timeout.
  bool waitForLog(const std::string& text, std::chrono::milliseconds timeout);

 private:
  static void logThunk(const void* ctx, sluice_log_level level, const char* msg, size_t len);
  static int publishThunk(sluice_discovery_sink* sink, const sluice_discovery_snapshot* snapshot);

  sluice_discovery_host_api discovery_api_{};
  sluice_host_api api_{};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<PublishedSnapshot> published_;
  std::vector<std::chrono::steady_clock::time_point> times_;
  std::vector<std::string> logs_;
};

// "a,b" of a snapshot's entries for `cluster` ("-" when the cluster is absent).
std::string endpointsOf(const PublishedSnapshot& s, const std::string& cluster);

}  // namespace sluice::testing
