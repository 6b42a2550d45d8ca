// zookeeper — a discovery plugin that turns a ZooKeeper registry into sluice clusters: one
// cluster per context path (sluice layout, Dubbo REST providers) or per service (Curator /
// Spring Cloud Zookeeper). See config.h for the YAML and docs/zookeeper.md for the layouts.
//
// Threads: the constructor, start() and stop() run on sluice's main thread. Between start()
// and stop() everything else runs on the plugin's own loop thread (loop.h): the session's
// events, the tree's reads and answers, snapshot building and publishing, the cache file and
// self-registration. The ZooKeeper C client's two threads only post to that loop. Snapshots are
// handed to the sink from the loop thread (the sink is thread-safe).
//
// Publishing: a snapshot is published only when the mirror is complete (every read of the
// current generation answered without error) and changed, after `debounce_ms` without further
// changes (at most ZookeeperConfig::kMaxPublishDelayMs after the first change of a burst), and
// only when it differs from the last one. While disconnected or re-reading after a new session
// nothing is published: clusters keep their last lists.
//
// start() waits up to `initial_wait_ms` for the first complete snapshot, so the clusters exist
// before sluice's listeners accept; if ZooKeeper does not answer in time it publishes the
// cache file (when configured) and keeps trying in the background.
#pragma once

#include <zookeeper/zookeeper.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/api/sdk/discovery.h"
#include "core/api/sdk/host.h"
#include "discovery/zookeeper/config.h"
#include "discovery/zookeeper/format.h"
#include "discovery/zookeeper/loop.h"
#include "discovery/zookeeper/protection.h"
#include "discovery/zookeeper/register.h"
#include "discovery/zookeeper/session.h"
#include "discovery/zookeeper/snapshot_builder.h"
#include "discovery/zookeeper/tree.h"
#include "discovery/zookeeper/tree_watch.h"

namespace sluice::zookeeper {

class ZookeeperDiscovery : public sdk::Discovery {
 public:
  ZookeeperDiscovery(const ZookeeperConfig& config, const sdk::Host& host);
  ~ZookeeperDiscovery() override;

  bool start(const sdk::Sink& sink) override;
  void stop() override;

  // A look inside, for tests and logs (any thread but the loop's; hops onto the loop).
  struct Status {
    bool connected = false;
    int64_t session_id = 0;
    size_t publishes = 0;           // snapshots handed to the sink (the cache file's included)
    bool from_cache = false;        // the last snapshot came from the cache file
    SnapshotStats last;             // of the last snapshot built from ZooKeeper
    std::vector<std::string> held;  // clusters held by empty_protection
    std::vector<std::string> registered;  // self-registration paths
  };
  Status status();
  // The current session's id and password (false while not connected), so a test can expire
  // it from a second client.
  bool clientId(clientid_t* out);

 private:
  void onTreeChanged();
  void maybePublish();
  void publishNow();
  void publishFromCache();
  void publish(const std::vector<sdk::DiscoveredCluster>& clusters, const std::string& what);
  void writeCache(const std::vector<sdk::DiscoveredCluster>& clusters);

  const ZookeeperConfig& config_;
  sdk::Host host_;
  std::string label_;
  std::unique_ptr<Format> format_;
  Loop loop_;
  Tree tree_;
  Session session_;
  TreeWatch watch_;
  SnapshotBuilder builder_;
  EmptyProtection protection_;
  std::optional<Registrar> registrar_;
  std::optional<sdk::Sink> sink_;
  bool started_ = false;  // main thread

  // Loop thread.
  bool dirty_ = false;
  bool published_from_zk_ = false;
  bool published_any_ = false;
  Loop::Clock::time_point first_change_;
  Loop::Clock::time_point last_change_;
  uint64_t publish_timer_ = 0;
  std::optional<std::vector<sdk::DiscoveredCluster>> last_published_;
  std::optional<std::vector<sdk::DiscoveredCluster>> last_cached_;
  Status status_;

  // start() waits for the first publish.
  std::mutex mutex_;
  std::condition_variable published_cv_;
  bool first_published_ = false;  // guarded by mutex_
};

}  // namespace sluice::zookeeper
