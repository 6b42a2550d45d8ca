// sluice C++ SDK — the C trampolines behind SLUICE_DISCOVERY_PLUGIN. Not for plugin code;
// included by core/api/sdk/discovery.h.
#pragma once

#include <memory>
#include <type_traits>

#include "core/api/discovery.h"
#include "core/api/sdk/internal.h"

namespace sluice::sdk::internal {

template <typename ConfigT, typename DiscoveryT>
struct DiscoveryPlugin {
  static_assert(std::is_base_of_v<Discovery, DiscoveryT>,
                "the discovery class must derive sdk::Discovery");

  // Behind config_create's handle: the config, plus the running object between start and stop.
  struct Running {
    Running(const ConfigT& config, const Host& host)
        : discovery(constructFrom<DiscoveryT>(config, host)) {}
    DiscoveryT discovery;
  };
  struct Config : ConfigHolder<ConfigT> {
    using ConfigHolder<ConfigT>::ConfigHolder;
    std::unique_ptr<Running> running;
  };

  static void* create(const sluice_host_api* host, const sluice_config_node* cfg,
                      sluice_error* err) noexcept {
    return configCreate<ConfigT, Config>(host, cfg, err);
  }
  static void destroy(void* config) noexcept {
    stop(config);  // the host stops first; this only guards against a missed stop
    std::unique_ptr<Config> owned(static_cast<Config*>(config));  // takes back the handle
  }
  static int start(void* config, sluice_discovery_sink* sink) noexcept {
    Config& c = *static_cast<Config*>(config);
    try {
      if (c.running) return -1;  // already started
      auto running = std::make_unique<Running>(c.config, c.host);
      if (!running->discovery.start(Sink(c.host.raw()->discovery, sink))) return -1;
      c.running = std::move(running);
      return 0;
    } catch (...) {
      logException(c.host, "start");
      return -1;
    }
  }
  static void stop(void* config) noexcept {
    Config& c = *static_cast<Config*>(config);
    try {
      if (c.running) c.running->discovery.stop();
    } catch (...) {
      logException(c.host, "stop");
    }
    c.running.reset();
  }

  static constexpr sluice_discovery_plugin kHooks = {
      sizeof(sluice_discovery_plugin), &create, &destroy, &start, &stop,
  };
};

}  // namespace sluice::sdk::internal
