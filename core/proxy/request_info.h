// The facts of one request that the access log (and later other observers) reads: who asked,
// what, where it went, how it ended. Modelled on Envoy's StreamInfo: one struct owned by the
// Stream, filled at the phase where each fact becomes known, read once when the request ends.
//
// Strings are views: they point into storage owned by the Stream (method, path, headers), its
// connection (client address, TLS facts), its filter chain (listener, filter names), its
// cluster or its host. They stay valid until the Stream is destroyed; formatting happens before
// that (Stream::finish() / teardown). Copy what you need to keep. Worker thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace sluice::proxy {

// The request context filters set: (key, value) in the order keys were first set. The first two
// entries (api_key_auth's "consumer" and "auth.method", say) live inside the Stream: no
// allocation for the table itself.
using RequestContext = absl::InlinedVector<std::pair<std::string, std::string>, 2>;

// Why a request ended the way it did; several may be set. Names (for logs) in responseFlagName.
enum ResponseFlag : uint32_t {
  kUpstreamTimeout = 1u << 0,         // no upstream response head within response_timeout_ms
  kUpstreamConnectFailure = 1u << 1,  // an upstream connection was refused or timed out
  kUpstreamReset = 1u << 2,           // an upstream connection closed or failed mid-exchange
  kUpstreamBadResponse = 1u << 3,     // an upstream response was malformed (502)
  kNoHealthyHost = 1u << 4,           // the balancer had no host to pick (503)
  kNoRoute = 1u << 5,                 // no route or no such cluster (404)
  kClientReset = 1u << 6,             // the client went away before the response was complete
  kDownstreamTimeout = 1u << 7,       // the client was too slow (408, or a stalled body)
  kBadRequest = 1u << 8,              // refused by the HTTP codec (400, 413, 414, 431, ...)
  kLocalReply = 1u << 9,              // sluice (or one of its filters) generated the response
  kResponseTruncated = 1u << 10,      // the response had started and was cut off
  kQueueTimeout = 1u << 11,           // no host had room within queue_timeout_ms (503, never sent)
  kQueueOverflow = 1u << 12,     // every host full and the wait queue full too (503, never sent)
  kUpstreamOverflow = 1u << 13,  // a circuit breaker refused the request or a retry (503)
  kRequestTimeout = 1u << 14,    // request_timeout_ms / the deadline passed (504)
  kRetryBudgetExhausted = 1u << 15,  // a retry was due but the retry budget was used up
};

// Every flag, in the order they are logged.
inline constexpr uint32_t kResponseFlagCount = 16;

// The log name of flag number `bit` (0-based, < kResponseFlagCount): "upstream_timeout", ...
inline std::string_view responseFlagName(uint32_t bit) {
  constexpr std::string_view kNames[kResponseFlagCount] = {
      "upstream_timeout",      "upstream_connect_failure", "upstream_reset",
      "upstream_bad_response", "no_healthy_host",          "no_route",
      "client_reset",          "downstream_timeout",       "bad_request",
      "local_reply",           "response_truncated",       "queue_timeout",
      "queue_overflow",        "upstream_overflow",        "request_timeout",
      "retry_budget_exhausted"};
  return bit < kResponseFlagCount ? kNames[bit] : std::string_view();
}

struct RequestInfo {
  // Wall-clock time the request head arrived (or the codec refused it), µs since the Unix epoch.
  int64_t start_unix_us = 0;
  // Monotonic clock at the same moment, µs (for durations).
  uint64_t start_mono_us = 0;
  // Total time, request head to the end of the response (or the reset), µs. Set at the end.
  uint64_t total_us = 0;
  // Time from the start of the last upstream attempt (host picked) to its response head, µs;
  // -1 when no upstream response head arrived.
  int64_t upstream_us = -1;

  // Connection facts. `tls_version` ("TLSv1.3") and `sni` stay empty on plain connections;
  // the connection layer fills them when it speaks TLS.
  std::string_view client_address;  // "ip:port" / "[ipv6]:port"
  std::string_view tls_version;
  std::string_view sni;
  std::string_view listener;

  // The request as received.
  std::string_view method;      // empty when the codec refused the request before its method
  std::string_view path;        // request-target as received (not rewritten)
  std::string_view protocol;    // "HTTP/1.1", "HTTP/1.0" (empty when unknown)
  std::string_view request_id;  // X-Request-Id of the request (after the filters ran)

  // Where it went.
  std::string_view cluster;
  std::string_view upstream_host;  // "host:port" of the last attempt's host
  uint32_t retries = 0;            // attempts after the first one

  // How it ended.
  uint32_t status = 0;     // status sent to the client; 0 when none was
  uint64_t bytes_in = 0;   // request body bytes received (no headers, no chunk framing)
  uint64_t bytes_out = 0;  // response body bytes sent (no headers, no chunk framing)
  std::string_view local_reply_filter;  // the filter that answered locally, or empty
  uint32_t flags = 0;                   // ResponseFlag bits

  // The request context filters set (key, value), in the order keys were first set; null or
  // empty when none. Owned by the Stream.
  const RequestContext* context = nullptr;

  void setFlag(ResponseFlag f) { flags |= f; }
  bool hasFlag(ResponseFlag f) const { return (flags & f) != 0; }
};

}  // namespace sluice::proxy
