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
// Exceptions: the SDK's trampolines catch everything; nothing crosses the C ABI. A throwing hook
// is logged and reported to the host as FilterStatus::kError, which applies the filter entry's
// `failure_mode` (closed: 500, or a reset once the response started; open: go on).
//
// Asynchronous work (ABI 1.2): return kPause from a data hook, then later, on the same worker,
// call Stream::resume() or answer with sendLocalReply(). Stream::armTimer() calls the filter's
// onTimer() on its worker; Stream::ref() gives a StreamRef that another thread can post() a
// callback through (it runs on the worker, with nullptr when the request ended meanwhile).
// docs/writing-a-filter.md walks through all of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
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
  kPause = SLUICE_FILTER_PAUSE,        // hold the message here: Stream::resume() (or a reply) later
  kError = SLUICE_FILTER_ERROR,        // the filter failed: the entry's failure_mode decides
};

// Which body (values of sluice_body_dir).
enum class Body : sluice_body_dir {
  kRequest = SLUICE_BODY_REQUEST,
  kResponse = SLUICE_BODY_RESPONSE,
};

// Facts about a request (values of sluice_attribute); see core/api/filter.h.
enum class Attribute : sluice_attribute {
  kRouteName = SLUICE_ATTR_ROUTE_NAME,
  kClusterName = SLUICE_ATTR_CLUSTER_NAME,
  kListenerName = SLUICE_ATTR_LISTENER_NAME,
  kRequestId = SLUICE_ATTR_REQUEST_ID,
  kTlsSni = SLUICE_ATTR_TLS_SNI,
  kTlsVersion = SLUICE_ATTR_TLS_VERSION,
  kTlsPeerSubject = SLUICE_ATTR_TLS_PEER_SUBJECT,
  kUpstreamPath = SLUICE_ATTR_UPSTREAM_PATH,
  kProtocol = SLUICE_ATTR_PROTOCOL,
};

// One extra header field of a local reply.
struct Header {
  std::string_view name;
  std::string_view value;
};

class Stream;

namespace internal {
// True when the host's filter table has the ABI 1.4 calls (its struct_size covers them and they
// are set: a test double may leave them NULL).
inline bool hasNamedHeaders(const sluice_filter_host_api* api) {
  return api != nullptr &&
         api->struct_size >=
             offsetof(sluice_filter_host_api, header_remove_named) + sizeof(void (*)()) &&
         api->header_name != nullptr && api->header_get_named != nullptr &&
         api->header_set_named != nullptr && api->header_add_named != nullptr &&
         api->header_remove_named != nullptr;
}
}  // namespace internal

// A header field name resolved once (ABI 1.4): build it when the config is read (the config
// class's constructor taking (node, const Host&)), keep it in the config, and pass it to
// Stream's header calls instead of the string: the host then neither looks the name up nor
// checks it per call. On a host without the calls (a test double) it keeps the string and the
// calls go by name, with the same results. Immutable: safe to read from every worker.
class HeaderName {
 public:
  HeaderName() = default;
  // `name` must be a valid field name (isHeaderName): check it first to report a config error;
  // an invalid one gives a HeaderName that matches nothing and sets nothing.
  HeaderName(const Host& host, std::string_view name) : name_(name) {
    const sluice_host_api* raw = host.raw();
    if (raw != nullptr && internal::hasNamedHeaders(raw->filter)) {
      handle_ = raw->filter->header_name({name_.data(), name_.size()});
      invalid_ = handle_ == nullptr;
    }
  }
  const std::string& str() const { return name_; }
  bool empty() const { return name_.empty(); }
  // The host's handle; nullptr on a host without ABI 1.4's calls.
  const sluice_header_name* handle() const { return handle_; }
  // The host refused the name (not a token): every call with it fails or finds nothing.
  bool invalid() const { return invalid_; }

 private:
  std::string name_;
  const sluice_header_name* handle_ = nullptr;
  bool invalid_ = false;
};

// A request's name for coming back to its worker from another thread (ABI 1.2). Cheap to copy,
// safe to keep after the request ended (it is a number, not a pointer). Any thread.
class StreamRef {
 public:
  StreamRef() = default;
  StreamRef(const sluice_filter_host_api* api, sluice_stream_ref ref) : api_(api), ref_(ref) {}

  // Runs fn(Stream*) on the request's worker thread: with the live stream, or with nullptr when
  // the request ended before fn could run (then touch nothing per-request). False when the
  // worker no longer exists (fn is destroyed, never called). An exception from fn is caught;
  // when the stream is alive it is answered 500 (or reset when its response started).
  template <typename Fn>
  bool post(Fn&& fn) const;

  bool valid() const { return api_ != nullptr && ref_ != 0; }

 private:
  const sluice_filter_host_api* api_ = nullptr;
  sluice_stream_ref ref_ = 0;
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
  // With the SDK's timer trampoline: armTimer() calls back into the filter (set by the SDK).
  Stream(const sluice_filter_host_api* api, sluice_stream* stream, sluice_timer_fn timer_fn,
         void* timer_arg)
      : api_(api), stream_(stream), timer_fn_(timer_fn), timer_arg_(timer_arg) {}

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

  // The same four by a resolved name (ABI 1.4): no lookup of the name per call.
  std::optional<std::string_view> header(HeaderMap map, const HeaderName& name,
                                         size_t index = 0) const {
    if (name.handle() == nullptr) {
      if (name.invalid()) return std::nullopt;
      return header(map, std::string_view(name.str()), index);
    }
    sluice_str v = api_->header_get_named(stream_, toC(map), name.handle(), index);
    if (v.data == nullptr) return std::nullopt;
    return std::string_view(v.data, v.len);
  }
  std::optional<std::string_view> requestHeader(const HeaderName& name) const {
    return header(HeaderMap::kRequest, name);
  }
  bool setHeader(HeaderMap map, const HeaderName& name, std::string_view value) {
    if (name.handle() == nullptr) {
      return !name.invalid() && setHeader(map, std::string_view(name.str()), value);
    }
    return api_->header_set_named(stream_, toC(map), name.handle(), str(value)) == 0;
  }
  bool addHeader(HeaderMap map, const HeaderName& name, std::string_view value) {
    if (name.handle() == nullptr) {
      return !name.invalid() && addHeader(map, std::string_view(name.str()), value);
    }
    return api_->header_add_named(stream_, toC(map), name.handle(), str(value)) == 0;
  }
  size_t removeHeader(HeaderMap map, const HeaderName& name) {
    if (name.handle() == nullptr) {
      return name.invalid() ? 0 : removeHeader(map, std::string_view(name.str()));
    }
    return api_->header_remove_named(stream_, toC(map), name.handle());
  }

  // Answer locally (status 200..599, body copied). From a request hook, then return kStop; or
  // while paused, instead of resume().
  void sendLocalReply(uint32_t status, std::string_view body,
                      std::string_view content_type = "text/plain") {
    api_->send_local_reply(stream_, status, str(content_type), str(body));
  }
  // Same, with extra response header fields (WWW-Authenticate, Retry-After, ...). Fields with
  // invalid syntax and framing/hop-by-hop fields are dropped by the host (and logged).
  void sendLocalReply(uint32_t status, std::string_view body, std::string_view content_type,
                      std::initializer_list<Header> headers) {
    sendLocalReply(status, body, content_type, headers.begin(), headers.size());
  }
  void sendLocalReply(uint32_t status, std::string_view body, std::string_view content_type,
                      const Header* headers, size_t count) {
    // Header and sluice_header_field differ in type; copy into the C layout (small, bounded).
    constexpr size_t kMax = 32;
    sluice_header_field fields[kMax];
    size_t n = count < kMax ? count : kMax;
    for (size_t i = 0; i < n; ++i) fields[i] = {str(headers[i].name), str(headers[i].value)};
    api_->send_local_reply_headers(stream_, status, str(content_type), str(body), fields, n);
  }
  // Continue a chain this filter paused. Same worker thread, any later event-loop callback (or
  // during the hook that returns kPause).
  void resume() { api_->resume(stream_); }

  // --- ABI 1.2 ---

  // Arms a one-shot timer: the filter's onTimer(stream, id) runs on this worker after
  // `delay_ms` (0 = next loop turn). Returns the id (> 0), or 0 when the request is ending.
  // The host cancels the request's timers when it ends. Only from inside a hook or callback of
  // a filter built with SLUICE_FILTER_PLUGIN (returns 0 on a Stream made by hand).
  uint64_t armTimer(uint64_t delay_ms) {
    if (timer_fn_ == nullptr) return 0;
    return api_->timer_arm(stream_, delay_ms, timer_fn_, timer_arg_);
  }
  // True when timer `id` was pending and is now cancelled.
  bool cancelTimer(uint64_t id) { return api_->timer_cancel(stream_, id) == 1; }
  // The request's name for StreamRef::post() from other threads.
  StreamRef ref() const { return StreamRef(api_, api_->stream_ref(stream_)); }

  // The request context shared by every filter of this request (keys: 1..64 of
  // [A-Za-z0-9_.-], values up to 4096 bytes, at most 64 keys). False when refused.
  bool setContext(std::string_view key, std::string_view value) {
    return api_->context_set(stream_, str(key), str(value)) == 0;
  }
  std::optional<std::string_view> context(std::string_view key) const {
    sluice_str v = api_->context_get(stream_, str(key));
    if (v.data == nullptr) return std::nullopt;
    return std::string_view(v.data, v.len);
  }

  // Request facts; nullopt when absent (TLS facts on plain connections, ...).
  std::optional<std::string_view> attribute(Attribute a) const {
    sluice_str v = api_->attribute(stream_, static_cast<sluice_attribute>(a));
    if (v.data == nullptr) return std::nullopt;
    return std::string_view(v.data, v.len);
  }
  std::string_view routeName() const { return attribute(Attribute::kRouteName).value_or(""); }
  std::string_view clusterName() const { return attribute(Attribute::kClusterName).value_or(""); }
  std::string_view listenerName() const { return attribute(Attribute::kListenerName).value_or(""); }
  // When the request head arrived: monotonic µs (same clock as Host::nowUs()).
  uint64_t startTimeUs() const { return api_->start_time_us(stream_, SLUICE_CLOCK_MONOTONIC); }
  // When the request head arrived: µs since the Unix epoch.
  uint64_t startTimeUnixUs() const { return api_->start_time_us(stream_, SLUICE_CLOCK_REALTIME); }

  // From onRequestHeaders (kRequest) or onResponseHeaders (kResponse): the body hook then sees
  // the whole body once (end_stream true), at most `max_bytes`; a larger body ends the request
  // with `over_limit_status` (0: 413 request, 502 response). False from another hook.
  bool bufferBody(Body body, uint64_t max_bytes, uint32_t over_limit_status = 0) {
    return api_->buffer_body(stream_, static_cast<sluice_body_dir>(body), max_bytes,
                             over_limit_status) == 0;
  }
  // The path and query as they will be sent upstream (after the route's rewrite).
  std::string_view upstreamPath() const { return attribute(Attribute::kUpstreamPath).value_or(""); }
  // From onRequestHeaders: send the request upstream with this path and query instead (no new
  // routing). False when invalid (see set_upstream_path in core/api/filter.h) or too late.
  bool setUpstreamPath(std::string_view path_and_query) {
    return api_->set_upstream_path(stream_, str(path_and_query)) == 0;
  }
  // From the body hook that got a whole buffered body: replace it (Content-Length follows).
  bool replaceBody(Body body, std::string_view data) {
    return api_->body_replace(stream_, static_cast<sluice_body_dir>(body), str(data)) == 0;
  }

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
  sluice_timer_fn timer_fn_ = nullptr;
  void* timer_arg_ = nullptr;
};

namespace internal {
// What StreamRef::post() hands the host as `arg`: the callable, until it ran.
template <typename Fn>
struct Posted {
  const sluice_filter_host_api* api;
  Fn fn;
  static void run(void* arg, sluice_stream* s) noexcept {
    std::unique_ptr<Posted> self(static_cast<Posted*>(arg));  // exactly one call: take it back
    if (s == nullptr) {
      try {
        self->fn(static_cast<Stream*>(nullptr));
      } catch (...) {
      }
      return;
    }
    Stream stream(self->api, s);
    try {
      self->fn(&stream);
    } catch (...) {
      stream.sendLocalReply(500, "filter error\n");
    }
  }
};
}  // namespace internal

template <typename Fn>
bool StreamRef::post(Fn&& fn) const {
  if (!valid()) return false;
  using P = internal::Posted<std::decay_t<Fn>>;
  auto holder = std::make_unique<P>(P{api_, std::forward<Fn>(fn)});
  if (api_->post(ref_, &P::run, holder.get()) != 0) return false;
  holder.release();  // owned by the host's queue until P::run takes it back
  return true;
}

// The longest name the host's header_name interns (core/api/filter.h): a HeaderName built from
// a longer one is invalid() and matches and sets nothing, so a config naming one must be refused
// (headerNameProblem).
constexpr size_t kMaxHeaderNameBytes = 256;

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

// For a name a filter will resolve to a HeaderName: "" when it can be, else the message for
// ConfigNode::fail: "'X Y' is not a header name", "'X-aaaa...' is longer than 256 bytes" (the
// name quoted up to 64 bytes).
inline std::string headerNameProblem(std::string_view name) {
  const char* why = !isHeaderName(name)                 ? "is not a header name"
                    : name.size() > kMaxHeaderNameBytes ? "is longer than 256 bytes"
                                                        : nullptr;
  if (why == nullptr) return std::string();
  return "'" + std::string(name.substr(0, 64)) + (name.size() > 64 ? "...' " : "' ") + why;
}

// ASCII case-insensitive equality, the comparison header field names use (RFC 9110 §5.1).
inline bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

// True when `value` can go in a header field: no CR, LF or NUL (RFC 9110 §5.5).
inline bool isHeaderValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// Base of a per-request filter. A filter that keeps nothing per request (only references to
// its config and worker) may declare `static constexpr bool kPerWorker = true;`: the SDK then
// builds one object per worker, in worker_create, that serves every request of that worker
// (its hooks run for many requests in turn, interleaved when they pause), and leaves the C
// table's stream_create/stream_destroy NULL so that the host makes nothing per request. Every hook
// defaults to kContinue / no-op; override only what you need (the SDK leaves hooks you do not
// override NULL in the C table, so the host skips them — body hooks especially). Worker thread
// only. Do not declare other overloads of these names.
class Filter {
 public:
  virtual ~Filter() = default;
  // Request headers complete; `end_stream` when the request has no body. May return kPause.
  virtual FilterStatus onRequestHeaders(Stream& /*stream*/, bool /*end_stream*/) {
    return FilterStatus::kContinue;
  }
  // A piece of request body (borrowed for the call), or the whole body after bufferBody().
  virtual FilterStatus onRequestBody(Stream& /*stream*/, std::string_view /*data*/,
                                     bool /*end_stream*/) {
    return FilterStatus::kContinue;
  }
  // Response headers, before they go downstream; may change them.
  virtual FilterStatus onResponseHeaders(Stream& /*stream*/, bool /*end_stream*/) {
    return FilterStatus::kContinue;
  }
  // A piece of response body (borrowed for the call), or the whole body after bufferBody().
  virtual FilterStatus onResponseBody(Stream& /*stream*/, std::string_view /*data*/,
                                      bool /*end_stream*/) {
    return FilterStatus::kContinue;
  }
  // A timer armed with Stream::armTimer() fired (`id` is what armTimer returned). Call resume()
  // or sendLocalReply() from here to end a pause. An exception is logged and answered 500.
  virtual void onTimer(Stream& /*stream*/, uint64_t /*id*/) {}
  // The request ended (completed, reset or failed); called exactly once. Read-only.
  virtual void onLog(const Stream& /*stream*/) {}
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
