// Test helper for discovery plugins: a host table whose log lines and discovery sink are
// recorded, so a test can call the plugin's classes directly and see what it said and published.
// Thread-safe: a plugin's own thread may log and publish while the test waits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/api/discovery.h"
#include "core/api/sdk/discovery.h"
#include "core/api/sdk/host.h"

namespace sluice::testing {

// What one publish() carried: cluster name → addresses ("addr" or "addr w=N zone=Z k=v ..."
// with the non-default fields), in published order.
using PublishedSnapshot = std::map<std::string, std::vector<std::string>>;

class RecordingHost {
 public:
  RecordingHost();
  RecordingHost(const RecordingHost&) = delete;
  RecordingHost& operator=(const RecordingHost&) = delete;

  // The host as the plugin sees it, and a sink that records into this object.
  sdk::Host host() const { return sdk::Host(&api_); }
  // (The opaque sink handle is this object, cast; the C type is incomplete outside the core.)
  sdk::Sink sink() { return sdk::Sink(&discovery_api_, sinkHandle()); }
  sluice_discovery_sink* sinkHandle() { return reinterpret_cast<sluice_discovery_sink*>(this); }

  // The raw table, for calling a plugin's C hooks; `config` (e.g. plugin::configApi()) is what
  // config_create will read its YAML through.
  const sluice_host_api* raw(const sluice_config_api* config) {
    api_.config = config;
    return &api_;
  }

  // Everything published so far, oldest first.
  std::vector<PublishedSnapshot> published() const;
  size_t publishCount() const;
  // Waits until more than `count` snapshots were published; false on timeout.
  bool waitForPublish(size_t count, std::chrono::milliseconds timeout);

  // Log lines so far ("WARN text", "INFO text", ...).
  std::vector<std::string> logs() const;
  // How many log lines contain `text`.
  size_t countLogs(const std::string& text) const;

 private:
  static void logThunk(const void* ctx, sluice_log_level level, const char* msg, size_t len);
  static int publishThunk(sluice_discovery_sink* sink, const sluice_discovery_snapshot* snapshot);

  sluice_discovery_host_api discovery_api_{};
  sluice_host_api api_{};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<PublishedSnapshot> published_;
  std::vector<std::string> logs_;
};

}  // namespace sluice::testing
