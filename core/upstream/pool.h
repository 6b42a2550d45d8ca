// Per-worker pool of idle keep-alive upstream connections, keyed by host. Worker thread only.
// Hosts are shared by address across reloads, so pools survive balancer and config swaps.
#pragma once

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/upstream/connection.h"

namespace sluice::upstream {

class ConnPool {
 public:
  explicit ConnPool(event::Worker& worker) : worker_(worker) {}
  ~ConnPool();

  // An idle connection to `host` (most recently used first), or nullptr.
  std::unique_ptr<UpstreamConnection> acquire(const Host* host);
  // Keeps `conn` for reuse when it is reusable and fewer than `max_idle` wait for its host;
  // otherwise closes it. `idle_timeout_ms` closes it after that long unused.
  void release(std::unique_ptr<UpstreamConnection> conn, uint32_t max_idle,
               uint32_t idle_timeout_ms);
  // Called by an idle connection that closed or failed: drops it (deferred delete).
  void remove(UpstreamConnection* conn);
  // Closes every idle connection (drain / shutdown).
  void clear();
  size_t idleCount() const;

 private:
  event::Worker& worker_;
  absl::flat_hash_map<const Host*, std::vector<std::unique_ptr<UpstreamConnection>>> idle_;
};

}  // namespace sluice::upstream
