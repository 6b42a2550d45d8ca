// file — a discovery plugin that publishes the clusters of an endpoints file (YAML or JSON, see
// endpoints_file.h) and follows its changes.
//
// YAML:
//   discovery:
//     - name: file
//       config:
//         path: endpoints.yaml   # required; a relative path is relative to sluice's working dir
//         interval_ms: 1000      # how often the file is stat'ed; default 1000, at least 50
//         optional: false        # true: a missing file at start is not an error
//       cluster_defaults: { balancer: round_robin }
//
// Watching is by polling (see file_source.h), chosen over inotify because it also follows
// symlink swaps (Kubernetes ConfigMaps), network and bind-mounted filesystems, and files whose
// directory is replaced, with one code path; the cost is one stat(2) per interval.
//
// At config time (also `sluice --validate`) the file must exist (unless `optional: true`) and
// parse: sluice refuses to start on a broken endpoints file. At run time a broken, half-written
// or deleted file is logged and the last good snapshot stays.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/api/sdk/config.h"
#include "core/api/sdk/discovery.h"
#include "core/api/sdk/host.h"
#include "discovery/file/file_source.h"

namespace sluice::discovery {

// Immutable after construction (main thread).
struct FileDiscoveryConfig {
  // Reads and checks `node`; throws sdk::ConfigError. Relative paths are made absolute against
  // the current working directory.
  explicit FileDiscoveryConfig(const sdk::ConfigNode& node);

  static constexpr int64_t kDefaultIntervalMs = 1000;
  static constexpr int64_t kMinIntervalMs = 50;
  static constexpr int64_t kMaxIntervalMs = 3600 * 1000;

  std::string path;  // absolute
  int64_t interval_ms = kDefaultIntervalMs;
  bool optional = false;
};

// The running plugin: a poller thread between start() and stop().
class FileDiscovery : public sdk::Discovery {
 public:
  FileDiscovery(const FileDiscoveryConfig& config, const sdk::Host& host);
  ~FileDiscovery() override;

  // Main thread. Reads the file and publishes it (when it parses), then starts the poller.
  bool start(const sdk::Sink& sink) override;
  // Main thread. Wakes the poller and joins it; returns within one poll's work, not an interval.
  void stop() override;

 private:
  void run();
  void publish(const std::vector<sdk::DiscoveredCluster>& clusters);

  const FileDiscoveryConfig& config_;
  sdk::Host host_;
  FileSource source_;  // used by start(), then by the poller thread only
  std::optional<sdk::Sink> sink_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
};

}  // namespace sluice::discovery
