// sluice C++ SDK — HTTP filters.
//
// A filter plugin is three classes and one macro:
//
//   struct MyConfig {                       // main thread; immutable afterwards
//     explicit MyConfig(const sluice::sdk::ConfigNode& node);   // or (node, const Host&)
//   };
//   class MyFilter : public sluice::sdk::Filter {               // one per request
//    public:
//     explicit MyFilter(const MyConfig& config);                 // or (config, MyWorker&), or ()
//     sluice::sdk::FilterStatus onRequestHeaders(sluice::sdk::Stream& s, bool end) override;
//   };
//   SLUICE_FILTER_PLUGIN("my_filter", "1.0.0", MyConfig, MyFilter)
//
// Optional per-worker state (a PRNG, a cache) goes in a worker class, constructed on the worker's
// thread from (const MyConfig&, uint32_t worker_index), (const MyConfig&) or ():
//   SLUICE_FILTER_PLUGIN_WITH_WORKER("my_filter", "1.0.0", MyConfig, MyWorker, MyFilter)
//
// Threads and lifetimes: the config object is built on the main thread and then only read, from
// every worker at once (keep it immutable). A worker object lives on one worker thread; a filter
// object lives for one request on that worker's thread, so neither needs locks. The config
// outlives its workers, a worker outlives its filters; keep references downward only.
//
// Exceptions: the SDK's trampolines catch everything. A throwing request or response hook is
// logged, answered with a local 500 (headers hooks) and the chain is stopped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>

#include "core/api/filter.h"
#include "core/api/sdk/config.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/internal.h"

namespace sluice::sdk {

// What a hook returns (values of sluice_filter_status).
enum class FilterStatus : sluice_filter_status {
  kContinue = SLUICE_FILTER_CONTINUE,  // go on with the next filter
  kStop = SLUICE_FILTER_STOP,          // stop the chain: a local reply was sent
  kPause = SLUICE_FILTER_PAUSE,        // onRequestHeaders only: call Stream::resume() later
};

// Which header map (values of sluice_header_map).
enum class HeaderMap : sluice_header_map {
  kRequest = SLUICE_HEADERS_REQUEST,
  kResponse = SLUICE_HEADERS_RESPONSE,
};

// The request being filtered: a borrowed view of the host's stream, valid during the hook it is
// passed to (do not keep it; keep nothing it returns past the hook). Worker thread only.
// Header names compare case-insensitively. Returned string_views are valid until the next change
// to the same header map or the end of the hook.
class Stream {
 public:
  Stream(const sluice_filter_host_api* api, sluice_stream* stream) : api_(api), stream_(stream) {}

  std::string_view method() const { return view(api_->method(stream_)); }
  // Request target as the client sent it (path plus query), before any rewrite.
  std::string_view path() const { return view(api_->path(stream_)); }
  // Downstream peer, "ip:port" or "[v6]:port".
  std::string_view clientAddress() const { return view(api_->client_address(stream_)); }
  // Response status; 0 before response headers exist.
  uint32_t responseStatus() const { return api_->response_status(stream_); }
  uint32_t workerIndex() const { return api_->worker_index(stream_); }

  // The `index`-th field called `name`, or nullopt.
  std::optional<std::string_view> header(HeaderMap map, std::string_view name,
                                         size_t index = 0) const {
    sluice_str v = api_->header_get(stream_, toC(map), str(name), index);
    if (v.data == nullptr) return std::nullopt;
    return std::string_view(v.data, v.len);
  }
  std::optional<std::string_view> requestHeader(std::string_view name) const {
    return header(HeaderMap::kRequest, name);
  }
  std::optional<std::string_view> responseHeader(std::string_view name) const {
    return header(HeaderMap::kResponse, name);
  }
  size_t headerCount(HeaderMap map) const { return api_->header_count(stream_, toC(map)); }
  // Calls fn(name, value) for every field in wire order. Do not change the map from fn.
  template <typename Fn>
  void forEachHeader(HeaderMap map, Fn&& fn) const {
    sluice_str n{}, v{};
    for (size_t i = 0; api_->header_at(stream_, toC(map), i, &n, &v) == 0; ++i) {
      fn(view(n), view(v));
    }
  }

  // Replace every `name` field by one with `value`; false (map unchanged) on invalid syntax.
  bool setHeader(HeaderMap map, std::string_view name, std::string_view value) {
    return api_->header_set(stream_, toC(map), str(name), str(value)) == 0;
  }
  // Append one field; false (map unchanged) on invalid syntax.
  bool addHeader(HeaderMap map, std::string_view name, std::string_view value) {
    return api_->header_add(stream_, toC(map), str(name), str(value)) == 0;
  }
  // Remove every `name` field; returns how many were removed.
  size_t removeHeader(HeaderMap map, std::string_view name) {
    return api_->header_remove(stream_, toC(map), str(name));
  }

  // Answer locally (status 200..599, body copied). From a request hook, then return kStop; or
  // while paused, instead of resume().
  void sendLocalReply(uint32_t status, std::string_view body,
                      std::string_view content_type = "text/plain") {
    api_->send_local_reply(stream_, status, str(content_type), str(body));
  }
  // Continue a chain this filter paused. Same worker thread, any later event-loop callback.
  void resume() { api_->resume(stream_); }

  // The raw handle, valid until the request ends (e.g. to resume() from a timer later: build a
  // new Stream from api() and raw() on the same worker thread).
  sluice_stream* raw() const { return stream_; }
  const sluice_filter_host_api* api() const { return api_; }

 private:
  static sluice_header_map toC(HeaderMap m) { return static_cast<sluice_header_map>(m); }
  static sluice_str str(std::string_view s) { return {s.data(), s.size()}; }
  static std::string_view view(sluice_str s) {
    return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
  }
  const sluice_filter_host_api* api_;
  sluice_stream* stream_;
};

// True when `name` is a valid header field name (an RFC 9110 token: 1+ of
// !#$%&'*+-.^_`|~ digits letters). Use it to validate names at config time.
inline bool isHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// True when `value` can go in a header field: no CR, LF or NUL (RFC 9110 §5.5).
inline bool isHeaderValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// Base of a per-request filter. Every hook defaults to kContinue / no-op; override only what you
// need (the SDK leaves hooks you do not override NULL in the C table, so the host skips them —
// body hooks especially). Worker thread only. Do not declare other overloads of these names.
class Filter {
 public:
  virtual ~Filter() = default;
  // Request headers complete; `end_stream` when the request has no body. May return kPause.
  virtual FilterStatus onRequestHeaders(Stream& stream, bool end_stream) {
    return FilterStatus::kContinue;
  }
  // A piece of request body (borrowed for the call).
  virtual FilterStatus onRequestBody(Stream& stream, std::string_view data, bool end_stream) {
    return FilterStatus::kContinue;
  }
  // Response headers, before they go downstream; may change them.
  virtual FilterStatus onResponseHeaders(Stream& stream, bool end_stream) {
    return FilterStatus::kContinue;
  }
  // A piece of response body (borrowed for the call).
  virtual FilterStatus onResponseBody(Stream& stream, std::string_view data, bool end_stream) {
    return FilterStatus::kContinue;
  }
  // The request ended (completed, reset or failed); called exactly once. Read-only.
  virtual void onLog(const Stream& stream) {}
};

// Default worker type: no per-worker state.
struct NoWorker {};

}  // namespace sluice::sdk

#include "core/api/sdk/filter_impl.h"  // IWYU pragma: export

// Defines the plugin's entry point. NAME and VERSION are string literals; CONFIG and FILTER the
// classes above. Use once per shared object, at namespace scope.
#define SLUICE_FILTER_PLUGIN(NAME, VERSION, CONFIG, FILTER) \
  SLUICE_FILTER_PLUGIN_WITH_WORKER(NAME, VERSION, CONFIG, ::sluice::sdk::NoWorker, FILTER)

#define SLUICE_FILTER_PLUGIN_WITH_WORKER(NAME, VERSION, CONFIG, WORKER, FILTER)     \
  extern "C" __attribute__((visibility("default"))) const sluice_plugin_descriptor* \
  sluice_plugin_entry(void) {                                                       \
    static const sluice_plugin_descriptor descriptor = {                            \
        SLUICE_ABI_MAJOR,                                                           \
        SLUICE_ABI_MINOR,                                                           \
        sizeof(sluice_plugin_descriptor),                                           \
        SLUICE_PLUGIN_KIND_FILTER,                                                  \
        NAME,                                                                       \
        VERSION,                                                                    \
        &::sluice::sdk::internal::FilterPlugin<CONFIG, WORKER, FILTER>::kHooks};    \
    return &descriptor;                                                             \
  }
