#include "core/stats/families.h"

namespace sluice::stats {

// ---- downstream, per listener
const FamilySpec kDownstreamRequests{
    Kind::kCounter,
    "sluice_downstream_requests_total",
    "Responses sent to clients by status class (gateway-generated ones and codec refusals "
    "included).",
    {"listener", "status_class"}};
const FamilySpec kDownstreamReceived{Kind::kCounter,
                                     "sluice_downstream_requests_received_total",
                                     "Requests whose head was valid (routed or answered locally).",
                                     {"listener"}};
const FamilySpec kDownstreamRefused{
    Kind::kCounter,
    "sluice_downstream_requests_refused_total",
    "Requests refused by the HTTP codec (400, 408, 413, 414, 431, 505).",
    {"listener"}};
const FamilySpec kDownstreamDuration{Kind::kHistogram,
                                     "sluice_downstream_request_duration_seconds",
                                     "Time from a valid request head to the end of its response.",
                                     {"listener"}};
const FamilySpec kDownstreamCxTotal{Kind::kCounter,
                                    "sluice_downstream_connections_total",
                                    "Client connections accepted.",
                                    {"listener"}};
const FamilySpec kDownstreamCxActive{Kind::kGauge,
                                     "sluice_downstream_connections_active",
                                     "Client connections open now.",
                                     {"listener"}};
const FamilySpec kDownstreamRebalanced{
    Kind::kCounter,
    "sluice_downstream_connections_rebalanced_total",
    "Client connections one worker accepted and handed to a less loaded one "
    "(listeners[].connection_balance: exact).",
    {"listener"}};
const FamilySpec kWorkerConnections{
    Kind::kGauge,
    "sluice_worker_downstream_connections",
    "Client connections each worker holds now (every listener, idle ones included).",
    {"worker"}};
const FamilySpec kDownstreamTunnels{
    Kind::kCounter,
    "sluice_downstream_tunnels_total",
    "Upgraded connections (101 Switching Protocols, e.g. WebSocket) that became tunnels.",
    {"listener"}};
const FamilySpec kDownstreamTunnelsActive{
    Kind::kGauge, "sluice_downstream_tunnels_active", "Tunnels open now.", {"listener"}};

// ---- downstream TLS, per listener (only TLS listeners have these series)
const FamilySpec kTlsHandshakes{Kind::kCounter,
                                "sluice_downstream_tls_handshakes_total",
                                "TLS handshakes completed, by result (full or resumed).",
                                {"listener", "result"}};
const FamilySpec kTlsHandshakeFailures{
    Kind::kCounter,
    "sluice_downstream_tls_handshake_failures_total",
    "TLS handshakes that failed, by reason (protocol, unknown_sni, alpn, peer_certificate, "
    "peer_closed, timeout, other).",
    {"listener", "reason"}};
const FamilySpec kTlsCertificateExpiry{
    Kind::kGauge,
    "sluice_tls_certificate_expiry_timestamp_seconds",
    "When each loaded certificate expires (its notAfter, Unix time).",
    {"listener", "certificate"}};

// ---- upstream, per cluster and host
const FamilySpec kUpstreamRequests{
    Kind::kCounter,
    "sluice_upstream_requests_total",
    "Final response heads received from upstream hosts, by status class.",
    {"cluster", "host", "status_class"}};
const FamilySpec kUpstreamLatency{
    Kind::kHistogram,
    "sluice_upstream_response_time_seconds",
    "Time from picking the host to receiving its final response head.",
    {"cluster", "host"}};
const FamilySpec kUpstreamCxCreated{Kind::kCounter,
                                    "sluice_upstream_connections_created_total",
                                    "Upstream connections opened.",
                                    {"cluster", "host"}};
const FamilySpec kUpstreamCxReused{Kind::kCounter,
                                   "sluice_upstream_connections_reused_total",
                                   "Requests sent on a pooled keep-alive upstream connection.",
                                   {"cluster", "host"}};
const FamilySpec kUpstreamCxActive{Kind::kGauge,
                                   "sluice_upstream_connections_active",
                                   "Upstream connections open now (busy or idle in the pool).",
                                   {"cluster", "host"}};
const FamilySpec kUpstreamCxIdle{Kind::kGauge,
                                 "sluice_upstream_connections_idle",
                                 "Upstream connections idle in the keep-alive pool.",
                                 {"cluster", "host"}};
const FamilySpec kUpstreamConnectFailures{Kind::kCounter,
                                          "sluice_upstream_connect_failures_total",
                                          "Connects refused, unreachable or timed out.",
                                          {"cluster", "host"}};
const FamilySpec kUpstreamTimeouts{Kind::kCounter,
                                   "sluice_upstream_timeouts_total",
                                   "Responses not started within response_timeout_ms.",
                                   {"cluster", "host"}};
const FamilySpec kUpstreamResets{
    Kind::kCounter,
    "sluice_upstream_resets_total",
    "Upstream connections reset, or answering badly, during an exchange.",
    {"cluster", "host"}};

// ---- per cluster
const FamilySpec kUpstreamRetries{Kind::kCounter,
                                  "sluice_upstream_retries_total",
                                  "Attempts retried (on another host, or on a fresh "
                                  "connection after a stale keep-alive one).",
                                  {"cluster"}};
const FamilySpec kUpstreamNoHost{Kind::kCounter,
                                 "sluice_upstream_no_healthy_host_total",
                                 "Requests answered 503 because the balancer found no host.",
                                 {"cluster"}};

// ---- per cluster: the wait queue of max_requests_per_host (core/upstream/wait_queue.h)
const FamilySpec kQueueLength{Kind::kGauge,
                              "sluice_upstream_queue_length",
                              "Requests waiting now for a host with room.",
                              {"cluster"}};
const FamilySpec kQueued{Kind::kCounter,
                         "sluice_upstream_queued_total",
                         "Requests that found every host at max_requests_per_host and "
                         "waited in the queue.",
                         {"cluster"}};
const FamilySpec kQueueDispatched{Kind::kCounter,
                                  "sluice_upstream_queue_dispatched_total",
                                  "Queued requests that left the queue for a host.",
                                  {"cluster"}};
const FamilySpec kQueueTimeouts{
    Kind::kCounter,
    "sluice_upstream_queue_timeouts_total",
    "Queued requests that ran out of time there: 503 after queue_timeout_ms, or "
    "their request deadline (request_timeout_ms) passed.",
    {"cluster"}};
const FamilySpec kQueueOverflows{
    Kind::kCounter,
    "sluice_upstream_queue_overflows_total",
    "Requests answered 503 at once because the queue held max_queue requests already.",
    {"cluster"}};
const FamilySpec kQueueCancelled{Kind::kCounter,
                                 "sluice_upstream_queue_cancelled_total",
                                 "Queued requests whose client went away (or that the "
                                 "cluster's removal answered 503) before a host had room.",
                                 {"cluster"}};

// ---- resilience, per cluster (retries, budget, circuit breakers, timeouts)
const FamilySpec kUpstreamRetryReasons{
    Kind::kCounter,
    "sluice_upstream_retries_by_reason_total",
    "Retries by the condition that caused them (connect_failure, reset, 502, 503, 504, "
    "per_try_timeout, stale_connection).",
    {"cluster", "reason"}};
const FamilySpec kUpstreamRetriesActive{
    Kind::kGauge,
    "sluice_upstream_retries_active",
    "Requests retrying now (waiting in backoff or on a retry attempt).",
    {"cluster"}};
const FamilySpec kUpstreamRetryBudgetExhausted{
    Kind::kCounter,
    "sluice_upstream_retry_budget_exhausted_total",
    "Retries not made because the retry budget was used up (the original answer went out).",
    {"cluster"}};
const FamilySpec kUpstreamCircuitBreakerOverflow{
    Kind::kCounter,
    "sluice_upstream_circuit_breaker_overflow_total",
    "Requests refused (503) or retries not made because a circuit breaker was at its limit "
    "(max_connections, max_pending_requests, max_requests, max_retries).",
    {"cluster", "breaker"}};
const FamilySpec kUpstreamTimeoutKinds{
    Kind::kCounter,
    "sluice_upstream_timeouts_by_kind_total",
    "Upstream-side timeouts by kind (connect, per_try, response_body, request, "
    "deadline_expired).",
    {"cluster", "kind"}};
const FamilySpec kUpstreamResponseHeadersTooLarge{
    Kind::kCounter,
    "sluice_upstream_response_headers_too_large_total",
    "Upstream responses refused (502) for a header section over max_response_header_bytes or "
    "max_response_header_count.",
    {"cluster"}};
const FamilySpec kDownstreamTimeoutKinds{
    Kind::kCounter,
    "sluice_downstream_timeouts_total",
    "Client connections cut by a timeout, by kind (header: 408, body: 408 for a stalled "
    "request body, idle: keep-alive idle).",
    {"listener", "kind"}};

// ---- process
const FamilySpec kDiscoveryUpdates{
    Kind::kCounter,
    "sluice_discovery_updates_total",
    "Snapshots published by discovery plugins (result: accepted or refused).",
    {"discovery", "result"}};
const FamilySpec kPluginHookErrors{
    Kind::kCounter,
    "sluice_plugin_hook_errors_total",
    "Plugin hooks that failed (returned NULL or an error, or stopped without a reply).",
    {"plugin", "hook"}};

// ---- filters, per listener and filter entry (name as in the YAML)
const FamilySpec kFilterCalls{
    Kind::kCounter,
    "sluice_filter_calls_total",
    "Filter hook calls (headers and body hooks, both directions; not on_log).",
    {"listener", "filter"}};
const FamilySpec kFilterLocalReplies{
    Kind::kCounter,
    "sluice_filter_local_replies_total",
    "Requests a filter answered itself (send_local_reply from a hook, a timer or a post).",
    {"listener", "filter"}};
const FamilySpec kFilterErrors{
    Kind::kCounter,
    "sluice_filter_errors_total",
    "Filter failures: ERROR (or an unknown status), STOP without a reply, or a filter that "
    "could not start for a request (worker_create or stream_create failed).",
    {"listener", "filter"}};

const FamilySpec kFilterDuration{
    Kind::kHistogram,
    "sluice_filter_duration_seconds",
    "Time spent in one filter's hooks for one request (the sum over its hooks), measured on 1 "
    "request in 16 of each chain on each worker.",
    {"listener", "filter"},
    &filterBuckets()};

namespace {

const char* const kClasses[5] = {"1xx", "2xx", "3xx", "4xx", "5xx"};

}  // namespace

const Buckets& filterBuckets() {
  static const Buckets kBuckets = {0.000002, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001,
                                   0.00025,  0.0005,   0.001,   0.0025,   0.005,   0.01,
                                   0.025,    0.05,     0.1,     0.25,     1};
  return kBuckets;
}

FilterStats::FilterStats(const std::string& listener, const std::string& filter, Registry& r)
    : calls(r.counter(kFilterCalls, {listener, filter})),
      local_replies(r.counter(kFilterLocalReplies, {listener, filter})),
      errors(r.counter(kFilterErrors, {listener, filter})),
      duration(r.histogram(kFilterDuration, {listener, filter})) {}

ListenerStats::ListenerStats(const std::string& listener,
                             const std::vector<std::string>& tls_failure_reasons, Registry& r)
    : received(r.counter(kDownstreamReceived, {listener})),
      refused(r.counter(kDownstreamRefused, {listener})),
      duration(r.histogram(kDownstreamDuration, {listener})),
      cx_total(r.counter(kDownstreamCxTotal, {listener})),
      cx_active(r.gauge(kDownstreamCxActive, {listener})),
      rebalanced(r.counter(kDownstreamRebalanced, {listener})),
      tunnels_total(r.counter(kDownstreamTunnels, {listener})),
      tunnels_active(r.gauge(kDownstreamTunnelsActive, {listener})) {
  for (int c = 0; c < 5; ++c) requests[c] = r.counter(kDownstreamRequests, {listener, kClasses[c]});
  static const char* const kKinds[kTimeoutKinds] = {"header", "body", "idle"};
  for (int i = 0; i < kTimeoutKinds; ++i) {
    timeouts[i] = r.counter(kDownstreamTimeoutKinds, {listener, kKinds[i]});
  }
  if (tls_failure_reasons.empty()) return;
  tls_full = r.counter(kTlsHandshakes, {listener, "full"});
  tls_resumed = r.counter(kTlsHandshakes, {listener, "resumed"});
  for (const std::string& reason : tls_failure_reasons) {
    tls_failed.push_back(r.counter(kTlsHandshakeFailures, {listener, reason}));
  }
}

ClusterStats::ClusterStats(const std::string& cluster, Registry& r)
    : retries(r.counter(kUpstreamRetries, {cluster})),
      no_healthy_host(r.counter(kUpstreamNoHost, {cluster})),
      retries_active(r.gauge(kUpstreamRetriesActive, {cluster})),
      retry_budget_exhausted(r.counter(kUpstreamRetryBudgetExhausted, {cluster})),
      response_headers_too_large(r.counter(kUpstreamResponseHeadersTooLarge, {cluster})) {
  static const char* const kReasons[kRetryReasons] = {
      "connect_failure", "reset", "502", "503", "504", "per_try_timeout", "stale_connection"};
  static const char* const kBreakerNames[kBreakers] = {"max_connections", "max_pending_requests",
                                                       "max_requests", "max_retries"};
  static const char* const kKinds[kTimeoutKinds] = {"connect", "per_try", "response_body",
                                                    "request", "deadline_expired"};
  for (int i = 0; i < kRetryReasons; ++i) {
    retry_reasons[i] = r.counter(kUpstreamRetryReasons, {cluster, kReasons[i]});
  }
  for (int i = 0; i < kBreakers; ++i) {
    breaker_overflow[i] = r.counter(kUpstreamCircuitBreakerOverflow, {cluster, kBreakerNames[i]});
  }
  for (int i = 0; i < kTimeoutKinds; ++i) {
    timeouts[i] = r.counter(kUpstreamTimeoutKinds, {cluster, kKinds[i]});
  }
}

QueueStats::QueueStats(const std::string& cluster, Registry& r)
    : length(r.gauge(kQueueLength, {cluster})),
      queued(r.counter(kQueued, {cluster})),
      dispatched(r.counter(kQueueDispatched, {cluster})),
      timeouts(r.counter(kQueueTimeouts, {cluster})),
      overflows(r.counter(kQueueOverflows, {cluster})),
      cancelled(r.counter(kQueueCancelled, {cluster})) {}

HostStats::HostStats(const std::string& cluster, const std::string& host, Registry& r)
    : latency(r.histogram(kUpstreamLatency, {cluster, host})),
      cx_created(r.counter(kUpstreamCxCreated, {cluster, host})),
      cx_reused(r.counter(kUpstreamCxReused, {cluster, host})),
      cx_active(r.gauge(kUpstreamCxActive, {cluster, host})),
      cx_idle(r.gauge(kUpstreamCxIdle, {cluster, host})),
      connect_failures(r.counter(kUpstreamConnectFailures, {cluster, host})),
      timeouts(r.counter(kUpstreamTimeouts, {cluster, host})),
      resets(r.counter(kUpstreamResets, {cluster, host})) {
  for (int c = 1; c < 5; ++c) {
    requests[c] = r.counter(kUpstreamRequests, {cluster, host, kClasses[c]});
  }
}

}  // namespace sluice::stats
