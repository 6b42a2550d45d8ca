// sluice C++ SDK — load balancers.
//
//   struct MyConfig { explicit MyConfig(const sluice::sdk::ConfigNode& node); };  // main thread
//   class MyBalancer : public sluice::sdk::Balancer {      // one per cluster per worker
//    public:
//     MyBalancer(const MyConfig& config, const sluice::sdk::BalancerContext& ctx);  // or (config)
//     void onHostSet(const sluice::sdk::HostSet& hosts) override;
//     int64_t pick(const sluice::sdk::PickContext& ctx) override;
//   };
//   SLUICE_BALANCER_PLUGIN("my_balancer", "1.0.0", MyConfig, MyBalancer)
//
// Threads: the config object is built on the main thread and then read from every worker (keep
// it immutable). A balancer object is created, used and destroyed on one worker thread and needs
// no locks. Call order: constructor, onHostSet (first set, possibly empty), any mix of pick /
// onResult / onHostSet, destructor. Exceptions are caught by the SDK: a throwing pick returns
// SLUICE_PICK_NONE (the host answers 503), a throwing onHostSet leaves the balancer as it was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/api/balancer.h"
#include "core/api/sdk/config.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/internal.h"

namespace sluice::sdk {

// pick() result meaning "no host can take the request".
inline constexpr int64_t kPickNone = SLUICE_PICK_NONE;

// How an attempt ended (values of sluice_outcome).
enum class Outcome : sluice_outcome {
  kSuccess = SLUICE_OUTCOME_SUCCESS,
  kHttp5xx = SLUICE_OUTCOME_HTTP_5XX,
  kConnectFailure = SLUICE_OUTCOME_CONNECT_FAILURE,
  kTimeout = SLUICE_OUTCOME_TIMEOUT,
  kReset = SLUICE_OUTCOME_RESET,
  kCancelled = SLUICE_OUTCOME_CANCELLED,
};

// What the host offers one balancer instance: its cluster, worker, and the worker's random
// generator. Valid for the instance's whole life; worker thread only.
class BalancerContext {
 public:
  BalancerContext(Host host, std::string cluster, uint32_t worker_index)
      : host_(host), cluster_(std::move(cluster)), worker_index_(worker_index) {}
  const std::string& cluster() const { return cluster_; }
  uint32_t workerIndex() const { return worker_index_; }
  const Host& host() const { return host_; }
  // A uniformly random 64-bit number from the worker's generator (0 without a host table).
  uint64_t random() const {
    const sluice_host_api* h = host_.raw();
    return h != nullptr && h->balancer != nullptr ? h->balancer->random() : 0;
  }

 private:
  Host host_;
  std::string cluster_;
  uint32_t worker_index_;
};

// One endpoint of a HostSet (a borrowed view with the set's lifetime).
class HostEntry {
 public:
  explicit HostEntry(const sluice_host_entry& e) : e_(&e) {}
  std::string_view address() const { return view(e_->address); }  // "ip:port"
  uint32_t weight() const { return e_->weight; }                  // >= 1
  bool healthy() const { return e_->healthy != 0; }               // may receive traffic
  std::string_view zone() const { return view(e_->zone); }
  // Value of metadata `key`, or nullopt.
  std::optional<std::string_view> metadata(std::string_view key) const {
    for (size_t i = 0; i < e_->metadata_count; ++i) {
      if (view(e_->metadata[2 * i]) == key) return view(e_->metadata[2 * i + 1]);
    }
    return std::nullopt;
  }

 private:
  static std::string_view view(sluice_str s) {
    return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
  }
  const sluice_host_entry* e_;
};

// An immutable host set: a borrowed view, valid from the onHostSet call that delivers it until
// the next onHostSet or the balancer's destruction (a balancer may keep the HostSet by value).
class HostSet {
 public:
  HostSet(const sluice_host_set* set, const sluice_balancer_host_api* api) : set_(set), api_(api) {}
  size_t size() const { return set_->count; }
  bool empty() const { return set_->count == 0; }
  HostEntry operator[](size_t i) const { return HostEntry(set_->hosts[i]); }
  uint64_t version() const { return set_->version; }
  // In-flight requests on host `i` across all workers (0 without a host table).
  uint32_t activeRequests(size_t i) const {
    return api_ != nullptr && api_->active_requests != nullptr
               ? api_->active_requests(set_, static_cast<uint32_t>(i))
               : 0;
  }
  const sluice_host_set* raw() const { return set_; }

 private:
  const sluice_host_set* set_;
  const sluice_balancer_host_api* api_;
};

// The request being balanced; borrowed for the pick call.
class PickContext {
 public:
  explicit PickContext(const sluice_pick_context* ctx) : ctx_(ctx) {}
  // The cluster's hash key for this request; empty when none.
  std::string_view hashKey() const {
    return ctx_->hash_key.data == nullptr
               ? std::string_view()
               : std::string_view(ctx_->hash_key.data, ctx_->hash_key.len);
  }
  // Host indexes already tried for this request, most recent last.
  size_t triedCount() const { return ctx_->tried_count; }
  uint32_t tried(size_t i) const { return ctx_->tried[i]; }
  bool wasTried(size_t index) const {
    for (size_t i = 0; i < ctx_->tried_count; ++i) {
      if (ctx_->tried[i] == index) return true;
    }
    return false;
  }

 private:
  const sluice_pick_context* ctx_;
};

// Base of a balancer. Worker thread only; see the file comment for the call order.
class Balancer {
 public:
  virtual ~Balancer() = default;
  // Hosts, weights or health changed: rebuild schedules here, not in pick().
  virtual void onHostSet(const HostSet& hosts) = 0;
  // Index of a host with healthy() in the current set, or kPickNone. Must not block.
  virtual int64_t pick(const PickContext& ctx) = 0;
  // An attempt on host `index` ended. Optional: when not overridden the host skips the call.
  virtual void onResult(uint32_t index, Outcome outcome, uint64_t latency_us) {}
};

}  // namespace sluice::sdk

#include "core/api/sdk/balancer_impl.h"  // IWYU pragma: export

// Defines the plugin's entry point. Use once per shared object, at namespace scope.
#define SLUICE_BALANCER_PLUGIN(NAME, VERSION, CONFIG, BALANCER)                     \
  extern "C" __attribute__((visibility("default"))) const sluice_plugin_descriptor* \
  sluice_plugin_entry(void) {                                                       \
    static const sluice_plugin_descriptor descriptor = {                            \
        SLUICE_ABI_MAJOR,                                                           \
        SLUICE_ABI_MINOR,                                                           \
        sizeof(sluice_plugin_descriptor),                                           \
        SLUICE_PLUGIN_KIND_BALANCER,                                                \
        NAME,                                                                       \
        VERSION,                                                                    \
        &::sluice::sdk::internal::BalancerPlugin<CONFIG, BALANCER>::kHooks};        \
    return &descriptor;                                                             \
  }
