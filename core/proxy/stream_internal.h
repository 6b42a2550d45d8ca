// Helpers shared by the Stream's source files (stream*.cc). Not a public header.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/api/balancer.h"
#include "core/event/transport.h"
#include "core/http/headers.h"
#include "core/upstream/connection.h"

namespace sluice::proxy::internal {

// Backpressure: stop reading a side when the other side's unsent bytes pass kHighWatermark;
// resume when they fall under kLowWatermark (the write callbacks' watermark).
constexpr size_t kHighWatermark = 256 * 1024;
constexpr size_t kLowWatermark = 64 * 1024;
// A local reply sent before the request body was read keeps the connection when at most this
// much body is still to come (it is read and discarded); more, or a chunked body, closes it.
constexpr uint64_t kMaxDiscardBytes = 64 * 1024;

// Monotonic µs, read once per transport callback (event::monotonicNowUs).
inline uint64_t nowUs() { return event::monotonicNowUs(); }

// "host:port" of an absolute-form target ("http://host:port/path"), or "".
std::string absoluteFormAuthority(const std::string& target);
// How an upstream error counts for the balancer (on_result).
sluice_outcome outcomeFor(upstream::UpstreamError e);
// The Content-Length value of a bodiless response (HEAD, 304) to pass on unchanged.
bool declaredLength(const http::HeaderMap& h, uint64_t* out);

}  // namespace sluice::proxy::internal
