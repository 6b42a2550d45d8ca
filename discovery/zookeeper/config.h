// The `zookeeper` discovery plugin's YAML config, validated on the main thread (config_create,
// also `sluice --validate`) and immutable afterwards. Nothing here talks to ZooKeeper.
//
//   discovery:
//     - name: zookeeper
//       config:
//         servers: 10.0.0.1:2181,10.0.0.2:2181/chroot   # required; C client connect string
//         format: sluice                # sluice (default) | dubbo | curator
//         root: /sluice                 # default per format: /sluice, /dubbo, /services
//         session_timeout_ms: 10000
//         auth: { user: gw, password: secret }          # optional digest auth
//         empty_protection: true        # hold updates that would empty a cluster
//         cache_file: /var/lib/sluice/zk-cache.yaml     # optional last-known-good snapshot
//         debounce_ms: 20               # quiet time before publishing a burst of changes
//         initial_wait_ms: 3000         # how long start() waits for the first snapshot
//         dubbo: { protocols: [rest], no_context_path: skip, default_weight: 100 }
//         register: { path: /sluice-gateways/edge, addresses: [10.0.0.5:8080] }
//
// docs/zookeeper.md documents every key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/metrics.h"

namespace sluice::zookeeper {

enum class FormatKind { kSluice, kDubbo, kCurator };

// Options of `format: dubbo`.
struct DubboOptions {
  enum class NoContextPath { kSkip, kInterface, kCluster };
  std::vector<std::string> protocols{"rest"};  // lower-case URL schemes to keep
  NoContextPath no_context_path = NoContextPath::kSkip;
  std::string no_context_path_cluster;  // for kCluster
  uint32_t default_weight = 100;        // Dubbo's default when a URL has no weight=
};

// `register:` — this gateway's own addresses as ephemeral sluice-layout nodes.
struct RegisterConfig {
  std::string path;                    // parent path; nodes are <path>/<host:port>
  std::vector<std::string> addresses;  // host:port each ("auto:PORT" = first non-loopback IPv4)
  std::string data;                    // JSON written into each node ("" = none)
};

// The plugin's metrics (sluice_plugin_zookeeper_*{registry="<servers><root>"}), declared with
// the config; updated from the discovery's loop thread. Do-nothing handles without a host.
struct ZookeeperMetrics {
  sdk::Counter publications;         // publications_total: snapshots handed to sluice
  sdk::Gauge malformed;              // malformed_nodes: unreadable nodes in the last snapshot
  sdk::Gauge skipped;                // skipped_nodes: nodes read but not used (disabled, ...)
  sdk::Gauge connected;              // session_connected: 1 while connected, else 0
  sdk::Counter session_expirations;  // session_expirations_total: sessions lost for good
};

struct ZookeeperConfig {
  // Reads and checks `node`, and declares the metrics through `host`; throws sdk::ConfigError
  // pointing at the offending key.
  explicit ZookeeperConfig(const sdk::ConfigNode& node, const sdk::Host& host = sdk::Host());
  ZookeeperConfig() = default;  // for tests: fill the fields by hand

  std::string servers;  // connect string, chroot included
  FormatKind format = FormatKind::kSluice;
  std::string root;  // absolute, no trailing '/' (except "/")
  int64_t session_timeout_ms = 10000;
  std::optional<std::pair<std::string, std::string>> auth;  // digest user, password
  bool empty_protection = true;
  std::string cache_file;  // "" = none
  int64_t debounce_ms = 20;
  int64_t initial_wait_ms = 3000;
  DubboOptions dubbo;
  std::optional<RegisterConfig> register_self;
  ZookeeperMetrics metrics;

  // Upper bound of the delay before publishing while changes keep arriving.
  static constexpr int64_t kMaxPublishDelayMs = 1000;
};

// The default root of `format`.
const char* defaultRoot(FormatKind format);
// "sluice", "dubbo", "curator".
const char* formatName(FormatKind format);
// True for an absolute ZooKeeper path with no empty, "." or ".." component and no trailing '/'.
bool isZkPath(const std::string& path);

}  // namespace sluice::zookeeper
