// The sink a discovery plugin publishes to. publish() may run on any plugin thread: it checks
// and copies the snapshot, keeps only the newest one, and wakes the main thread, which applies
// it to the ClusterManager. A burst of publishes costs one application.
#pragma once

#include <event2/event.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/api/discovery.h"
#include "core/event/notifier.h"
#include "core/server/cluster_manager.h"
#include "core/stats/families.h"

// The C handle plugins hold; defined here, opaque to them.
namespace sluice::server {
class DiscoverySinkImpl;
}  // namespace sluice::server

struct sluice_discovery_sink {
  sluice::server::DiscoverySinkImpl* impl;
};

namespace sluice::server {

using Snapshot = std::map<std::string, std::vector<EndpointSpec>>;

class DiscoverySinkImpl {
 public:
  // `apply` runs on the main thread (the thread running `base`).
  DiscoverySinkImpl(event_base* base, std::string name, std::function<void(const Snapshot&)> apply);
  ~DiscoverySinkImpl();
  DiscoverySinkImpl(const DiscoverySinkImpl&) = delete;
  DiscoverySinkImpl& operator=(const DiscoverySinkImpl&) = delete;

  sluice_discovery_sink* handle() { return &handle_; }
  // Any thread. 0, or -1 when the snapshot is malformed (logged; nothing changes).
  int publish(const sluice_discovery_snapshot* snapshot);
  // After this, publish() is refused (a stopped plugin's late call does nothing).
  void close();
  // Applies a pending snapshot now (main thread), e.g. one published inside start().
  void flush();

 private:
  // publish() without the counting.
  int take(const sluice_discovery_snapshot* snapshot);

  std::string name_;
  std::function<void(const Snapshot&)> apply_;
  sluice_discovery_sink handle_{this};
  std::unique_ptr<event::Notifier> wake_;  // publish() wakes the main loop
  std::mutex mutex_;
  std::optional<Snapshot> latest_;
  bool closed_ = false;
  stats::Counter accepted_;  // sluice_discovery_updates_total{discovery=name_}
  stats::Counter refused_;
};

// The discovery host API table (publish) the core gives discovery plugins.
const sluice_discovery_host_api* discoveryHostApi();

}  // namespace sluice::server
