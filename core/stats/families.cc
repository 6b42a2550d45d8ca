#include "core/stats/families.h"

namespace sluice::stats {
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
