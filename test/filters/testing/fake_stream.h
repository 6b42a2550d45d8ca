// Test helper: one request as the core's stream would present it to a filter, with plain header
// lists. Single-threaded. Header names compare case-insensitively; set/add refuse invalid syntax
// (returning -1) as the core does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/api/filter.h"

namespace sluice::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

class FilterHarness;

struct LocalReply {
  uint32_t status = 0;
  std::string content_type;
  std::string body;
  Headers headers;  // send_local_reply_headers' extra fields (valid ones only, as the core)
};

// A timer a filter armed (ABI 1.2); the test fires it with FilterHarness::fireTimers().
struct FakeTimer {
  uint64_t id = 0;
  uint64_t delay_ms = 0;
  sluice_timer_fn fn = nullptr;
  void* arg = nullptr;
};

// What a filter asked with buffer_body (ABI 1.2).
struct BufferRequest {
  uint64_t max_bytes = 0;
  uint32_t over_limit_status = 0;
};

class FakeStream {
 public:
  FakeStream(std::string method = "GET", std::string path = "/", Headers request = {})
      : method(std::move(method)), path(std::move(path)), request_headers(std::move(request)) {}
  // A stream still open in a FilterHarness is finished (on_log, stream_destroy) here, while it
  // is alive; the harness never touches it after this.
  ~FakeStream();
  FakeStream(const FakeStream&) = delete;
  FakeStream& operator=(const FakeStream&) = delete;

  std::string method;
  std::string path;
  std::string client_address = "127.0.0.1:40000";
  uint32_t worker_index = 0;
  uint32_t response_status = 0;
  Headers request_headers;
  Headers response_headers;
  std::optional<LocalReply> local_reply;
  int resumed = 0;
  // ABI 1.2 state.
  std::map<std::string, std::string> context;          // context_set / context_get
  std::map<sluice_attribute, std::string> attributes;  // attribute(); absent = {NULL, 0}
  uint64_t start_time_us = 1000;                       // SLUICE_CLOCK_MONOTONIC
  uint64_t start_time_unix_us = 1700000000000000;      // SLUICE_CLOCK_REALTIME
  std::vector<FakeTimer> timers;                       // armed, not yet fired or cancelled
  uint64_t next_timer_id = 1;
  std::optional<BufferRequest> buffer_request[2];  // [SLUICE_BODY_REQUEST/RESPONSE]
  std::optional<std::string> replaced_body[2];     // body_replace
  bool in_body_hook = false;                       // the harness sets it during body hooks
  sluice_stream_ref ref = 0;                       // stream_ref (set by the harness)
  int named_header_calls = 0;        // ABI 1.4 header_*_named calls made on this stream
  void* self = nullptr;              // the filter's stream_create handle (FilterHarness)
  FilterHarness* harness = nullptr;  // the harness that has this stream open, if any

  // The first extra header `name` of the local reply, or nullopt.
  std::optional<std::string> replyHeader(const std::string& name) const;
  // Every value of `name` in `map`, in order.
  std::vector<std::string> values(sluice_header_map map, const std::string& name) const;
  Headers& headers(sluice_header_map map) {
    return map == SLUICE_HEADERS_REQUEST ? request_headers : response_headers;
  }

  sluice_stream* handle() { return reinterpret_cast<sluice_stream*>(this); }
  static FakeStream& of(const sluice_stream* s) {
    return *reinterpret_cast<FakeStream*>(const_cast<sluice_stream*>(s));
  }
  // The host table over FakeStreams: every call up to ABI 1.4, the header-name handles
  // included (header_name interns like the real host: same bytes, same handle; a name that is
  // not a token of 1..256 bytes gets NULL). A filter's fallback to the by-string calls (a host
  // older than 1.4) is tested in //test/integration:header_names_test.
  static const sluice_filter_host_api* api();
};

}  // namespace sluice::testing
