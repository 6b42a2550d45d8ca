// sluice C++ SDK — service discovery.
//
//   struct MyConfig { explicit MyConfig(const sluice::sdk::ConfigNode& node); };  // main thread
//   class MyDiscovery : public sluice::sdk::Discovery {
//    public:
//     MyDiscovery(const MyConfig& config, const sluice::sdk::Host& host);  // or (config)
//     bool start(const sluice::sdk::Sink& sink) override;  // begin watching, publish snapshots
//     void stop() override;                                // no publish() after this returns
//   };
//   SLUICE_DISCOVERY_PLUGIN("my_discovery", "1.0.0", MyConfig, MyDiscovery)
//
// Threads and lifetimes: the config object and the discovery object are created on the main
// thread; the discovery object is constructed right before start() and destroyed right after
// stop() (both main thread). Between them it may run its own threads and call Sink::publish from
// any of them. Exceptions are caught by the SDK: a throwing start() counts as a failed start.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/api/discovery.h"
#include "core/api/sdk/config.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/internal.h"

namespace sluice::sdk {

// One discovered endpoint.
struct Endpoint {
  std::string address;  // "host:port"
  uint32_t weight = 0;  // 0 = default (1)
  std::string zone;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// One cluster's complete endpoint list.
struct DiscoveredCluster {
  std::string name;
  std::vector<Endpoint> endpoints;
};

// Where a started discovery publishes. Cheap to copy; valid from start() until stop() returns.
class Sink {
 public:
  Sink(const sluice_discovery_host_api* api, sluice_discovery_sink* sink)
      : api_(api), sink_(sink) {}
  // Publishes a full snapshot: every cluster this discovery knows, each complete; a cluster
  // missing from it is gone. Thread-safe. Returns false when the host refused it (it logs why).
  bool publish(const std::vector<DiscoveredCluster>& clusters) const {
    size_t total = 0;
    for (const DiscoveredCluster& c : clusters) total += c.endpoints.size();
    // Flattened C views of the strings in `clusters`; reserved up front so no pointer taken into
    // these vectors moves before the host has read them.
    std::vector<sluice_str> meta;
    std::vector<sluice_endpoint> eps;
    std::vector<sluice_discovered_cluster> cs;
    size_t pairs = 0;
    for (const DiscoveredCluster& c : clusters) {
      for (const Endpoint& e : c.endpoints) pairs += e.metadata.size();
    }
    meta.reserve(2 * pairs);
    eps.reserve(total);
    cs.reserve(clusters.size());
    for (const DiscoveredCluster& c : clusters) {
      const sluice_endpoint* first = eps.data() + eps.size();
      for (const Endpoint& e : c.endpoints) {
        const sluice_str* m = meta.data() + meta.size();
        for (const auto& [k, v] : e.metadata) {
          meta.push_back(str(k));
          meta.push_back(str(v));
        }
        eps.push_back({str(e.address), e.weight, str(e.zone), m, e.metadata.size()});
      }
      cs.push_back({str(c.name), first, c.endpoints.size()});
    }
    sluice_discovery_snapshot snapshot{cs.data(), cs.size()};
    return api_->publish(sink_, &snapshot) == 0;
  }

 private:
  static sluice_str str(const std::string& s) { return {s.data(), s.size()}; }
  const sluice_discovery_host_api* api_;
  sluice_discovery_sink* sink_;
};

// Base of a discovery plugin's running object.
class Discovery {
 public:
  virtual ~Discovery() = default;
  // Main thread. Begin watching and publish through `sink` (keep a copy). False = failed (log
  // why through the Host).
  virtual bool start(const Sink& sink) = 0;
  // Main thread. Stop watching; join your threads: no publish() may run after this returns.
  virtual void stop() = 0;
};

}  // namespace sluice::sdk

#include "core/api/sdk/discovery_impl.h"  // IWYU pragma: export

// Defines the plugin's entry point. Use once per shared object, at namespace scope.
#define SLUICE_DISCOVERY_PLUGIN(NAME, VERSION, CONFIG, DISCOVERY)                   \
  extern "C" __attribute__((visibility("default"))) const sluice_plugin_descriptor* \
  sluice_plugin_entry(void) {                                                       \
    static const sluice_plugin_descriptor descriptor = {                            \
        SLUICE_ABI_MAJOR,                                                           \
        SLUICE_ABI_MINOR,                                                           \
        sizeof(sluice_plugin_descriptor),                                           \
        SLUICE_PLUGIN_KIND_DISCOVERY,                                               \
        NAME,                                                                       \
        VERSION,                                                                    \
        &::sluice::sdk::internal::DiscoveryPlugin<CONFIG, DISCOVERY>::kHooks};      \
    return &descriptor;                                                             \
  }
