// The core's metric families and the per-object groups resolved from them when a listener, a
// cluster or a host is created (never per request). docs/operations.md lists every family.
//
// To add a family: one FamilySpec line here (or in your own header), and one
// `defaultRegistry().counter(kX, {label values})` where the labeled object is created; keep the
// handle next to that object and call inc()/add()/observe() on the request path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats/registry.h"

namespace sluice::stats {

// ---- downstream, per listener
inline const FamilySpec kDownstreamRequests{
    Kind::kCounter,
    "sluice_downstream_requests_total",
    "Responses sent to clients by status class (gateway-generated ones and codec refusals "
    "included).",
    {"listener", "status_class"}};
inline const FamilySpec kDownstreamReceived{
    Kind::kCounter,
    "sluice_downstream_requests_received_total",
    "Requests whose head was valid (routed or answered locally).",
    {"listener"}};
inline const FamilySpec kDownstreamRefused{
    Kind::kCounter,
    "sluice_downstream_requests_refused_total",
    "Requests refused by the HTTP codec (400, 408, 413, 414, 431, 505).",
    {"listener"}};
inline const FamilySpec kDownstreamDuration{
    Kind::kHistogram,
    "sluice_downstream_request_duration_seconds",
    "Time from a valid request head to the end of its response.",
    {"listener"}};
inline const FamilySpec kDownstreamCxTotal{Kind::kCounter,
                                           "sluice_downstream_connections_total",
                                           "Client connections accepted.",
                                           {"listener"}};
inline const FamilySpec kDownstreamCxActive{Kind::kGauge,
                                            "sluice_downstream_connections_active",
                                            "Client connections open now.",
                                            {"listener"}};
inline const FamilySpec kDownstreamRebalanced{
    Kind::kCounter,
    "sluice_downstream_connections_rebalanced_total",
    "Client connections one worker accepted and handed to a less loaded one "
    "(listeners[].connection_balance: exact).",
    {"listener"}};
inline const FamilySpec kWorkerConnections{
    Kind::kGauge,
    "sluice_worker_downstream_connections",
    "Client connections each worker holds now (every listener, idle ones included).",
    {"worker"}};
inline const FamilySpec kDownstreamTunnels{
    Kind::kCounter,
    "sluice_downstream_tunnels_total",
    "Upgraded connections (101 Switching Protocols, e.g. WebSocket) that became tunnels.",
    {"listener"}};
inline const FamilySpec kDownstreamTunnelsActive{
    Kind::kGauge, "sluice_downstream_tunnels_active", "Tunnels open now.", {"listener"}};

// ---- downstream TLS, per listener (only TLS listeners have these series)
inline const FamilySpec kTlsHandshakes{Kind::kCounter,
                                       "sluice_downstream_tls_handshakes_total",
                                       "TLS handshakes completed, by result (full or resumed).",
                                       {"listener", "result"}};
inline const FamilySpec kTlsHandshakeFailures{
    Kind::kCounter,
    "sluice_downstream_tls_handshake_failures_total",
    "TLS handshakes that failed, by reason (protocol, unknown_sni, alpn, peer_certificate, "
    "peer_closed, timeout, other).",
    {"listener", "reason"}};
inline const FamilySpec kTlsCertificateExpiry{
    Kind::kGauge,
    "sluice_tls_certificate_expiry_timestamp_seconds",
    "When each loaded certificate expires (its notAfter, Unix time).",
    {"listener", "certificate"}};

// ---- upstream, per cluster and host
inline const FamilySpec kUpstreamRequests{
    Kind::kCounter,
    "sluice_upstream_requests_total",
    "Final response heads received from upstream hosts, by status class.",
    {"cluster", "host", "status_class"}};
inline const FamilySpec kUpstreamLatency{
    Kind::kHistogram,
    "sluice_upstream_response_time_seconds",
    "Time from picking the host to receiving its final response head.",
    {"cluster", "host"}};
inline const FamilySpec kUpstreamCxCreated{Kind::kCounter,
                                           "sluice_upstream_connections_created_total",
                                           "Upstream connections opened.",
                                           {"cluster", "host"}};
inline const FamilySpec kUpstreamCxReused{
    Kind::kCounter,
    "sluice_upstream_connections_reused_total",
    "Requests sent on a pooled keep-alive upstream connection.",
    {"cluster", "host"}};
inline const FamilySpec kUpstreamCxActive{
    Kind::kGauge,
    "sluice_upstream_connections_active",
    "Upstream connections open now (busy or idle in the pool).",
    {"cluster", "host"}};
inline const FamilySpec kUpstreamCxIdle{Kind::kGauge,
                                        "sluice_upstream_connections_idle",
                                        "Upstream connections idle in the keep-alive pool.",
                                        {"cluster", "host"}};
inline const FamilySpec kUpstreamConnectFailures{Kind::kCounter,
                                                 "sluice_upstream_connect_failures_total",
                                                 "Connects refused, unreachable or timed out.",
                                                 {"cluster", "host"}};
inline const FamilySpec kUpstreamTimeouts{Kind::kCounter,
                                          "sluice_upstream_timeouts_total",
                                          "Responses not started within response_timeout_ms.",
                                          {"cluster", "host"}};
inline const FamilySpec kUpstreamResets{
    Kind::kCounter,
    "sluice_upstream_resets_total",
    "Upstream connections reset, or answering badly, during an exchange.",
    {"cluster", "host"}};

// ---- per cluster
inline const FamilySpec kUpstreamRetries{Kind::kCounter,
                                         "sluice_upstream_retries_total",
                                         "Attempts retried (on another host, or on a fresh "
                                         "connection after a stale keep-alive one).",
                                         {"cluster"}};
inline const FamilySpec kUpstreamNoHost{Kind::kCounter,
                                        "sluice_upstream_no_healthy_host_total",
                                        "Requests answered 503 because the balancer found no host.",
                                        {"cluster"}};

// ---- per cluster: the wait queue of max_requests_per_host (core/upstream/wait_queue.h)
inline const FamilySpec kQueueLength{Kind::kGauge,
                                     "sluice_upstream_queue_length",
                                     "Requests waiting now for a host with room.",
                                     {"cluster"}};
inline const FamilySpec kQueued{Kind::kCounter,
                                "sluice_upstream_queued_total",
                                "Requests that found every host at max_requests_per_host and "
                                "waited in the queue.",
                                {"cluster"}};
inline const FamilySpec kQueueDispatched{Kind::kCounter,
                                         "sluice_upstream_queue_dispatched_total",
                                         "Queued requests that left the queue for a host.",
                                         {"cluster"}};
inline const FamilySpec kQueueTimeouts{
    Kind::kCounter,
    "sluice_upstream_queue_timeouts_total",
    "Queued requests that ran out of time there: 503 after queue_timeout_ms, or "
    "their request deadline (request_timeout_ms) passed.",
    {"cluster"}};
inline const FamilySpec kQueueOverflows{
    Kind::kCounter,
    "sluice_upstream_queue_overflows_total",
    "Requests answered 503 at once because the queue held max_queue requests already.",
    {"cluster"}};
inline const FamilySpec kQueueCancelled{Kind::kCounter,
                                        "sluice_upstream_queue_cancelled_total",
                                        "Queued requests whose client went away (or that the "
                                        "cluster's removal answered 503) before a host had room.",
                                        {"cluster"}};
// ---- resilience, per cluster (retries, budget, circuit breakers, timeouts)
inline const FamilySpec kUpstreamRetryReasons{
    Kind::kCounter,
    "sluice_upstream_retries_by_reason_total",
    "Retries by the condition that caused them (connect_failure, reset, 502, 503, 504, "
    "per_try_timeout, stale_connection).",
    {"cluster", "reason"}};
inline const FamilySpec kUpstreamRetriesActive{
    Kind::kGauge,
    "sluice_upstream_retries_active",
    "Requests retrying now (waiting in backoff or on a retry attempt).",
    {"cluster"}};
inline const FamilySpec kUpstreamRetryBudgetExhausted{
    Kind::kCounter,
    "sluice_upstream_retry_budget_exhausted_total",
    "Retries not made because the retry budget was used up (the original answer went out).",
    {"cluster"}};
inline const FamilySpec kUpstreamCircuitBreakerOverflow{
    Kind::kCounter,
    "sluice_upstream_circuit_breaker_overflow_total",
    "Requests refused (503) or retries not made because a circuit breaker was at its limit "
    "(max_connections, max_pending_requests, max_requests, max_retries).",
    {"cluster", "breaker"}};
inline const FamilySpec kUpstreamTimeoutKinds{
    Kind::kCounter,
    "sluice_upstream_timeouts_by_kind_total",
    "Upstream-side timeouts by kind (connect, per_try, response_body, request, "
    "deadline_expired).",
    {"cluster", "kind"}};
inline const FamilySpec kUpstreamResponseHeadersTooLarge{
    Kind::kCounter,
    "sluice_upstream_response_headers_too_large_total",
    "Upstream responses refused (502) for a header section over max_response_header_bytes or "
    "max_response_header_count.",
    {"cluster"}};
inline const FamilySpec kDownstreamTimeoutKinds{
    Kind::kCounter,
    "sluice_downstream_timeouts_total",
    "Client connections cut by a timeout, by kind (header: 408, body: 408 for a stalled "
    "request body, idle: keep-alive idle).",
    {"listener", "kind"}};

// ---- process
inline const FamilySpec kDiscoveryUpdates{
    Kind::kCounter,
    "sluice_discovery_updates_total",
    "Snapshots published by discovery plugins (result: accepted or refused).",
    {"discovery", "result"}};
inline const FamilySpec kPluginHookErrors{
    Kind::kCounter,
    "sluice_plugin_hook_errors_total",
    "Plugin hooks that failed (returned NULL or an error, or stopped without a reply).",
    {"plugin", "hook"}};

// ---- filters, per listener and filter entry (name as in the YAML)
inline const FamilySpec kFilterCalls{
    Kind::kCounter,
    "sluice_filter_calls_total",
    "Filter hook calls (headers and body hooks, both directions; not on_log).",
    {"listener", "filter"}};
inline const FamilySpec kFilterLocalReplies{
    Kind::kCounter,
    "sluice_filter_local_replies_total",
    "Requests a filter answered itself (send_local_reply from a hook, a timer or a post).",
    {"listener", "filter"}};
inline const FamilySpec kFilterErrors{
    Kind::kCounter,
    "sluice_filter_errors_total",
    "Filter failures: ERROR (or an unknown status), STOP without a reply, or a filter that "
    "could not start for a request (worker_create or stream_create failed).",
    {"listener", "filter"}};
// 2 us .. 1 s: time in a filter is usually microseconds.
const Buckets& filterBuckets();
inline const FamilySpec kFilterDuration{
    Kind::kHistogram,
    "sluice_filter_duration_seconds",
    "Time spent in one filter's hooks for one request (the sum over its hooks), measured on 1 "
    "request in 16 of each chain on each worker.",
    {"listener", "filter"},
    &filterBuckets()};

// Index of a status class ("1xx" = 0 .. "5xx" = 4) or -1 outside 100..599.
inline int statusClass(uint32_t status) {
  return status >= 100 && status < 600 ? static_cast<int>(status / 100) - 1 : -1;
}

// One listener's series. Built on the main thread with the listener; shared by every worker.
struct ListenerStats {
  // `tls_failure_reasons`: the labels of the TLS failure reasons (tls::failureLabel order);
  // empty for a plain listener, which then has no TLS series.
  explicit ListenerStats(const std::string& listener,
                         const std::vector<std::string>& tls_failure_reasons = {},
                         Registry& registry = defaultRegistry());
  // Counts one response of `status`.
  void response(uint32_t status) const {
    int c = statusClass(status);
    if (c >= 0) requests[c].inc();
  }
  Counter requests[5];  // 1xx (an upgrade's 101 ends its HTTP exchange) .. 5xx
  Counter received;
  Counter refused;
  Histogram duration;
  Counter cx_total;
  Gauge cx_active;
  Counter rebalanced;  // accepted here, served by another worker
  Counter tunnels_total;
  Gauge tunnels_active;
  Counter tls_full;
  Counter tls_resumed;
  std::vector<Counter> tls_failed;  // by tls::HandshakeFailure
  std::vector<Gauge> cert_expiry;   // one per loaded certificate (kTlsCertificateExpiry)
  enum TimeoutKind { kHeaderTimeout, kBodyTimeout, kIdleTimeout, kTimeoutKinds };
  Counter timeouts[kTimeoutKinds];  // kDownstreamTimeoutKinds
};

// One filter entry's series on one listener (route chains count under their listener).
struct FilterStats {
  FilterStats(const std::string& listener, const std::string& filter,
              Registry& registry = defaultRegistry());
  Counter calls;
  Counter local_replies;
  Counter errors;
  Histogram duration;
};

// One cluster's series.
struct ClusterStats {
  explicit ClusterStats(const std::string& cluster, Registry& registry = defaultRegistry());
  Counter retries;
  Counter no_healthy_host;
  // Index order of the label arrays below (kRetryReasonLabels etc. in families.cc).
  enum RetryReason {
    kRetryConnectFailure,
    kRetryReset,
    kRetry502,
    kRetry503,
    kRetry504,
    kRetryPerTryTimeout,
    kRetryStaleConnection,
    kRetryReasons
  };
  enum Breaker { kMaxConnections, kMaxPendingRequests, kMaxRequests, kMaxRetries, kBreakers };
  enum TimeoutKind {
    kConnectTimeout,
    kPerTryTimeout,
    kResponseBodyTimeout,
    kRequestTimeout,
    kDeadlineExpired,
    kTimeoutKinds
  };
  Counter retry_reasons[kRetryReasons];
  Gauge retries_active;
  Counter retry_budget_exhausted;
  Counter breaker_overflow[kBreakers];
  Counter timeouts[kTimeoutKinds];
  Counter response_headers_too_large;
};

// One cluster's wait-queue series; owned by the cluster's WaitQueue (any thread updates them).
struct QueueStats {
  explicit QueueStats(const std::string& cluster, Registry& registry = defaultRegistry());
  Gauge length;
  Counter queued;
  Counter dispatched;
  Counter timeouts;
  Counter overflows;
  Counter cancelled;
};

// One host's series ({cluster, host}). Owned by the Host: they go when the host leaves the
// cluster and the last request or connection that used it ends.
struct HostStats {
  HostStats(const std::string& cluster, const std::string& host,
            Registry& registry = defaultRegistry());
  void response(uint32_t status, uint64_t latency_us) const {
    int c = statusClass(status);
    if (c >= 0) requests[c].inc();
    latency.observeMicros(latency_us);
  }
  Counter requests[5];  // 2xx..5xx
  Histogram latency;
  Counter cx_created;
  Counter cx_reused;
  Gauge cx_active;
  Gauge cx_idle;
  Counter connect_failures;
  Counter timeouts;
  Counter resets;
};

}  // namespace sluice::stats
