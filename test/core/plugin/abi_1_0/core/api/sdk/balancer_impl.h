// sluice C++ SDK — the C trampolines behind SLUICE_BALANCER_PLUGIN. Not for plugin code; included
// by core/api/sdk/balancer.h.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include "core/api/balancer.h"
#include "core/api/sdk/internal.h"

namespace sluice::sdk::internal {

template <typename ConfigT, typename BalancerT>
struct BalancerPlugin {
  static_assert(std::is_base_of_v<Balancer, BalancerT>,
                "the balancer class must derive sdk::Balancer");
  using Config = ConfigHolder<ConfigT>;

  // Behind instance_create's handle.
  struct Instance {
    Instance(const Config& c, const char* cluster, uint32_t worker_index)
        : context(c.host, cluster, worker_index),
          api(c.host.raw()->balancer),
          balancer(constructFrom<BalancerT>(c.config, std::as_const(context))) {}
    BalancerContext context;
    const sluice_balancer_host_api* api;
    BalancerT balancer;
  };

  static constexpr bool kResult =
      !std::is_same_v<decltype(&BalancerT::onResult), decltype(&Balancer::onResult)>;

  static void* instanceCreate(void* config, const char* cluster, uint32_t worker) noexcept {
    const Config& c = *static_cast<const Config*>(config);
    try {
      // Owned by the host as an opaque handle until instance_destroy.
      return std::make_unique<Instance>(c, cluster != nullptr ? cluster : "", worker).release();
    } catch (...) {
      logException(c.host, "instance_create");
      return nullptr;
    }
  }
  static void instanceDestroy(void* instance) noexcept {
    std::unique_ptr<Instance> owned(static_cast<Instance*>(instance));  // takes back the handle
  }
  static void hostSet(void* instance, const sluice_host_set* set) noexcept {
    Instance& in = *static_cast<Instance*>(instance);
    try {
      in.balancer.onHostSet(HostSet(set, in.api));
    } catch (...) {
      logException(in.context.host(), "onHostSet");
    }
  }
  static int64_t pick(void* instance, const sluice_pick_context* ctx) noexcept {
    Instance& in = *static_cast<Instance*>(instance);
    try {
      int64_t index = in.balancer.pick(PickContext(ctx));
      return index >= 0 ? index : SLUICE_PICK_NONE;
    } catch (...) {
      logException(in.context.host(), "pick");
      return SLUICE_PICK_NONE;
    }
  }
  static void result(void* instance, uint32_t index, sluice_outcome outcome,
                     uint64_t latency_us) noexcept {
    Instance& in = *static_cast<Instance*>(instance);
    try {
      in.balancer.onResult(index, static_cast<Outcome>(outcome), latency_us);
    } catch (...) {
      logException(in.context.host(), "onResult");
    }
  }

  static constexpr sluice_balancer_plugin kHooks = {
      sizeof(sluice_balancer_plugin),
      &configCreate<ConfigT>,
      &configDestroy<ConfigT>,
      &instanceCreate,
      &instanceDestroy,
      &hostSet,
      &pick,
      kResult ? &result : nullptr,
  };
};

}  // namespace sluice::sdk::internal
