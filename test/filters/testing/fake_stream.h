// Test helper: one request as the core's stream would present it to a filter, with plain header
// lists. Single-threaded. Header names compare case-insensitively; set/add refuse invalid syntax
// (returning -1) as the core does.
#pragma once

#include <cstdint>
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
  void* self = nullptr;              // the filter's stream_create handle (FilterHarness)
  FilterHarness* harness = nullptr;  // the harness that has this stream open, if any

  // Every value of `name` in `map`, in order.
  std::vector<std::string> values(sluice_header_map map, const std::string& name) const;
  Headers& headers(sluice_header_map map) {
    return map == SLUICE_HEADERS_REQUEST ? request_headers : response_headers;
  }

  sluice_stream* handle() { return reinterpret_cast<sluice_stream*>(this); }
  static FakeStream& of(const sluice_stream* s) {
    return *reinterpret_cast<FakeStream*>(const_cast<sluice_stream*>(s));
  }
  // The host table over FakeStreams.
  static const sluice_filter_host_api* api();
};

}  // namespace sluice::testing
