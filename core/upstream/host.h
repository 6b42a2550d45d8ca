// Upstream hosts and host sets.
//
// A Host is one endpoint address of a cluster. Its run-time state (in-flight requests, health)
// is shared by every worker through atomics and outlives host-set changes and reloads: the
// cluster's host table hands out the same Host object for the same address.
// A HostSet is an immutable snapshot of a cluster's endpoints (host, weight, zone, metadata),
// built on the main thread and posted to the workers, which hand it to their balancer.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/api/balancer.h"
#include "core/stats/families.h"
#include "core/upstream/host_health.h"

namespace sluice::upstream {

class Host {
 public:
  // A host of `cluster` (its metric series are labeled {cluster, host}).
  Host(const std::string& cluster, std::string address, const sockaddr* addr, socklen_t len);

  const std::string& address() const { return address_; }
  const sockaddr* sockAddr() const { return reinterpret_cast<const sockaddr*>(&addr_); }
  socklen_t sockAddrLen() const { return addr_len_; }

  // Requests in flight to this host from every worker (incremented at pick, decremented when
  // the attempt ends however it ends).
  std::atomic<uint32_t>& activeRequests() { return active_requests_; }
  uint32_t active() const { return active_requests_.load(std::memory_order_relaxed); }
  std::atomic<uint64_t>& totalRequests() { return total_requests_; }
  // May take traffic: not failed by health checks and not ejected (host_health.h).
  bool healthy() const { return health_.usable(); }
  HostHealth& health() { return health_; }
  const HostHealth& health() const { return health_; }
  // Metric series of this host; any thread.
  const stats::HostStats& stats() const { return stats_; }

 private:
  std::string address_;
  sockaddr_storage addr_{};
  socklen_t addr_len_ = 0;
  std::atomic<uint32_t> active_requests_{0};
  std::atomic<uint64_t> total_requests_{0};
  stats::HostStats stats_;
  HostHealth health_;
};

struct HostEntry {
  std::shared_ptr<Host> host;
  uint32_t weight = 1;
  std::string zone;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Immutable once built; shared by all workers.
class HostSet {
 public:
  // The C view's healthy flags are the hosts' healthy() as of now, or all 1 when `panic` (the
  // cluster's healthy share is below its panic threshold: balance over every host). Weights
  // are `effective_weights[i]` when given (slow start), else each entry's weight.
  HostSet(uint64_t version, std::vector<HostEntry> entries, bool panic = false,
          const std::vector<uint32_t>& effective_weights = {});
  HostSet(const HostSet&) = delete;
  HostSet& operator=(const HostSet&) = delete;

  uint64_t version() const { return version_; }
  size_t size() const { return entries_.size(); }
  const HostEntry& at(size_t i) const { return entries_[i]; }
  const std::vector<HostEntry>& entries() const { return entries_; }
  // The C view handed to balancer plugins (healthy flags as of construction).
  const sluice_host_set* cView() const { return &c_set_; }
  bool panic() const { return panic_; }
  // The weight balancers see for host i.
  uint32_t effectiveWeight(size_t i) const { return c_entries_[i].weight; }

 private:
  uint64_t version_;
  bool panic_;
  std::vector<HostEntry> entries_;
  std::vector<sluice_str> c_metadata_;
  std::vector<sluice_host_entry> c_entries_;
  sluice_host_set c_set_{};
};

// Resolves "host:port" / "[v6]:port" (numeric or by name, blocking getaddrinfo: main thread
// only). Returns false and sets *error when it cannot.
bool resolveAddress(const std::string& address, sockaddr_storage* out, socklen_t* len,
                    std::string* error);

}  // namespace sluice::upstream
