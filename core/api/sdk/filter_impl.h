// sluice C++ SDK — the C trampolines behind SLUICE_FILTER_PLUGIN. Not for plugin code; included
// by core/api/sdk/filter.h.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/api/filter.h"
#include "core/api/sdk/internal.h"

namespace sluice::sdk::internal {

template <typename ConfigT, typename WorkerT, typename FilterT>
struct FilterPlugin {
  static_assert(std::is_base_of_v<Filter, FilterT>, "the filter class must derive sdk::Filter");
  using Config = ConfigHolder<ConfigT>;

  struct State;

  // A filter class with `static constexpr bool kPerWorker = true` keeps nothing per request:
  // one object per worker serves every request of that worker, built in worker_create, and the
  // table has no stream_create/stream_destroy (the host then makes nothing per request and
  // passes the worker's handle to the hooks).
  template <typename F, typename = void>
  struct IsPerWorker : std::false_type {};
  template <typename F>
  struct IsPerWorker<F, std::enable_if_t<F::kPerWorker>> : std::true_type {};
  static constexpr bool kPerWorker = IsPerWorker<FilterT>::value;

  // Blocks of State size a worker keeps for reuse: stream_create and stream_destroy run on the
  // worker's thread and every stream state ends before its worker (core/api/filter.h), so a
  // plain per-worker free list replaces a malloc and a free per filter and request. At most
  // this many blocks stay cached (the rest are freed), all of them freed in worker_destroy.
  static constexpr size_t kMaxCachedStates = 64;

  // Behind worker_create's handle: the author's worker object, on its worker thread.
  struct Worker {
    Worker(const Config& c, uint32_t index)
        : config(c), worker(constructFrom<WorkerT>(c.config, index)) {}
    ~Worker() {
      for (void* block : free_states) ::operator delete(block);
    }
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    const Config& config;
    WorkerT worker;
    std::vector<void*> free_states;  // freed State blocks (kRecycle only)
    std::unique_ptr<State> shared;   // kPerWorker: the one filter object (destroyed first)
  };

  // Behind stream_create's handle: the author's per-request filter object.
  struct State {
    explicit State(Worker& w)
        : host(w.config.host),
          api(host.raw()->filter),
          owner(&w),
          filter(constructFrom<FilterT>(w.config.config, w.worker)) {}
    Host host;
    const sluice_filter_host_api* api;
    Worker* owner;  // outlives this state
    FilterT filter;
  };
  // Reuse needs only the default new alignment (an over-aligned FilterT is allocated each time).
  static constexpr bool kRecycle = alignof(State) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

  // A hook the author did not override is left NULL, so the host skips the call (the member
  // pointer's class is Filter itself exactly when FilterT inherits the default).
  static constexpr bool kRequestHeaders =
      !std::is_same_v<decltype(&FilterT::onRequestHeaders), decltype(&Filter::onRequestHeaders)>;
  static constexpr bool kRequestBody =
      !std::is_same_v<decltype(&FilterT::onRequestBody), decltype(&Filter::onRequestBody)>;
  static constexpr bool kResponseHeaders =
      !std::is_same_v<decltype(&FilterT::onResponseHeaders), decltype(&Filter::onResponseHeaders)>;
  static constexpr bool kResponseBody =
      !std::is_same_v<decltype(&FilterT::onResponseBody), decltype(&Filter::onResponseBody)>;
  static constexpr bool kLog = !std::is_same_v<decltype(&FilterT::onLog), decltype(&Filter::onLog)>;

  // A config class with `uint32_t unusedHooks() const` (SLUICE_HOOK_* bits) tells the host,
  // per config instance, which hooks its streams never need (ABI 1.3).
  template <typename C, typename = void>
  struct HasUnusedHooks : std::false_type {};
  template <typename C>
  struct HasUnusedHooks<C, std::void_t<decltype(std::declval<const C&>().unusedHooks())>>
      : std::true_type {};
  template <typename C>
  static uint32_t unusedHooks(const void* config) noexcept {
    const auto& c = *static_cast<const ConfigHolder<C>*>(config);
    try {
      return static_cast<uint32_t>(c.config.unusedHooks());
    } catch (...) {
      logException(c.host, "unusedHooks");
      return 0;
    }
  }
  static constexpr uint32_t (*unusedHooksHook())(const void*) {
    if constexpr (HasUnusedHooks<ConfigT>::value) {
      return &unusedHooks<ConfigT>;
    } else {
      return nullptr;
    }
  }

  static void* workerCreate(void* config, uint32_t index) noexcept {
    const Config& c = *static_cast<const Config*>(config);
    try {
      // Owned by the host as an opaque handle until worker_destroy.
      auto w = std::make_unique<Worker>(c, index);
      if constexpr (kPerWorker) {
        // The hooks' `self` is the worker handle: make it the shared State (its owner is the
        // Worker, which worker_destroy takes back through it).
        w->shared = std::make_unique<State>(*w);
        State* st = w->shared.get();
        w.release();
        return st;
      } else {
        if constexpr (kRecycle) w->free_states.reserve(kMaxCachedStates);
        return w.release();
      }
    } catch (...) {
      logException(c.host, "worker_create");
      return nullptr;
    }
  }
  static void workerDestroy(void* worker) noexcept {
    if constexpr (kPerWorker) {
      std::unique_ptr<Worker> owned(static_cast<State*>(worker)->owner);  // owns the State
    } else {
      std::unique_ptr<Worker> owned(static_cast<Worker*>(worker));  // takes back the handle
    }
  }
  static void* streamCreate(void* worker, sluice_stream* /*stream*/) noexcept {
    Worker& w = *static_cast<Worker*>(worker);
    void* block = nullptr;
    try {
      // Owned by the host as an opaque handle until stream_destroy.
      if constexpr (!kRecycle) {
        return std::make_unique<State>(w).release();
      } else {
        if (w.free_states.empty()) {
          block = ::operator new(sizeof(State));
        } else {
          block = w.free_states.back();
          w.free_states.pop_back();
        }
        State* st = new (block) State(w);
        return st;
      }
    } catch (...) {
      if (block != nullptr) ::operator delete(block);
      logException(w.config.host, "stream_create");
      return nullptr;
    }
  }
  static void streamDestroy(void* self) noexcept {
    if constexpr (!kRecycle) {
      std::unique_ptr<State> owned(static_cast<State*>(self));  // takes back the handle
    } else {
      State* st = static_cast<State*>(self);
      Worker* w = st->owner;
      st->~State();
      if (w->free_states.size() < kMaxCachedStates) {
        w->free_states.push_back(self);  // reserved in worker_create: never allocates
      } else {
        ::operator delete(self);
      }
    }
  }

  // After a hook threw: log it and report ERROR (the host applies the entry's failure_mode).
  static sluice_filter_status fault(State& st, const char* where) noexcept {
    logException(st.host, where);
    return SLUICE_FILTER_ERROR;
  }
  // The Stream a hook sees: armTimer() comes back through onTimer below.
  static Stream streamOf(State& st, sluice_stream* s) { return Stream(st.api, s, &timer, &st); }
  // sluice_timer_fn: `arg` is the State (alive: the host cancels timers when the stream ends).
  static void timer(void* arg, sluice_stream* s, uint64_t id) noexcept {
    State& st = *static_cast<State*>(arg);
    Stream stream = streamOf(st, s);
    try {
      st.filter.onTimer(stream, id);
    } catch (...) {
      logException(st.host, "onTimer");
      stream.sendLocalReply(500, "filter error\n");
    }
  }
  static sluice_filter_status requestHeaders(void* self, sluice_stream* s, int end) noexcept {
    State& st = *static_cast<State*>(self);
    Stream stream = streamOf(st, s);
    try {
      return static_cast<sluice_filter_status>(st.filter.onRequestHeaders(stream, end != 0));
    } catch (...) {
      return fault(st, "onRequestHeaders");
    }
  }
  static sluice_filter_status requestBody(void* self, sluice_stream* s, const char* data,
                                          size_t len, int end) noexcept {
    State& st = *static_cast<State*>(self);
    Stream stream = streamOf(st, s);
    try {
      return static_cast<sluice_filter_status>(
          st.filter.onRequestBody(stream, std::string_view(data, len), end != 0));
    } catch (...) {
      return fault(st, "onRequestBody");
    }
  }
  static sluice_filter_status responseHeaders(void* self, sluice_stream* s, int end) noexcept {
    State& st = *static_cast<State*>(self);
    Stream stream = streamOf(st, s);
    try {
      return static_cast<sluice_filter_status>(st.filter.onResponseHeaders(stream, end != 0));
    } catch (...) {
      return fault(st, "onResponseHeaders");
    }
  }
  static sluice_filter_status responseBody(void* self, sluice_stream* s, const char* data,
                                           size_t len, int end) noexcept {
    State& st = *static_cast<State*>(self);
    Stream stream = streamOf(st, s);
    try {
      return static_cast<sluice_filter_status>(
          st.filter.onResponseBody(stream, std::string_view(data, len), end != 0));
    } catch (...) {
      return fault(st, "onResponseBody");
    }
  }
  static void log(void* self, const sluice_stream* s) noexcept {
    State& st = *static_cast<State*>(self);
    // onLog only gets a const Stream&, so the const_cast never leads to a write.
    const Stream stream(st.api, const_cast<sluice_stream*>(s));
    try {
      st.filter.onLog(stream);
    } catch (...) {
      logException(st.host, "onLog");
    }
  }

  static constexpr sluice_filter_plugin kHooks = {
      sizeof(sluice_filter_plugin),
      &configCreate<ConfigT>,
      &configDestroy<ConfigT>,
      &workerCreate,
      &workerDestroy,
      kPerWorker ? nullptr : &streamCreate,
      kPerWorker ? nullptr : &streamDestroy,
      kRequestHeaders ? &requestHeaders : nullptr,
      kRequestBody ? &requestBody : nullptr,
      kResponseHeaders ? &responseHeaders : nullptr,
      kResponseBody ? &responseBody : nullptr,
      kLog ? &log : nullptr,
      unusedHooksHook(),
  };
};

}  // namespace sluice::sdk::internal
