// The core's metric families and the per-object groups resolved from them when a listener, a
// cluster or a host is created (never per request). docs/operations.md lists every family.
//
// To add a family: its declaration here and its FamilySpec (name, help, labels) in families.cc
// (or both in your own files), and one `defaultRegistry().counter(kX, {label values})` where
// the labeled object is created; keep the handle next to that object and call
// inc()/add()/observe() on the request path. The specs are defined in families.cc, not as inline
// variables here: an inline variable with strings and vectors is initialised (behind a guard)
// by the static initialiser of every file that includes this header, ~10 KiB of start-up code
// per file (430 KiB of the binary's 1.7 MiB of text before), all resident. They are only read
// once objects are built (never by another file's static initialiser).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stats/registry.h"

namespace sluice::stats {

// ---- downstream, per listener
extern const FamilySpec kDownstreamRequests;
extern const FamilySpec kDownstreamReceived;
extern const FamilySpec kDownstreamRefused;
extern const FamilySpec kDownstreamDuration;
extern const FamilySpec kDownstreamCxTotal;
extern const FamilySpec kDownstreamCxActive;
extern const FamilySpec kDownstreamRebalanced;
extern const FamilySpec kWorkerConnections;
extern const FamilySpec kDownstreamTunnels;
extern const FamilySpec kDownstreamTunnelsActive;

// ---- downstream TLS, per listener (only TLS listeners have these series)
extern const FamilySpec kTlsHandshakes;
extern const FamilySpec kTlsHandshakeFailures;
extern const FamilySpec kTlsCertificateExpiry;

// ---- upstream, per cluster and host
extern const FamilySpec kUpstreamRequests;
extern const FamilySpec kUpstreamLatency;
extern const FamilySpec kUpstreamCxCreated;
extern const FamilySpec kUpstreamCxReused;
extern const FamilySpec kUpstreamCxActive;
extern const FamilySpec kUpstreamCxIdle;
extern const FamilySpec kUpstreamConnectFailures;
extern const FamilySpec kUpstreamTimeouts;
extern const FamilySpec kUpstreamResets;

// ---- per cluster
extern const FamilySpec kUpstreamRetries;
extern const FamilySpec kUpstreamNoHost;

// ---- per cluster: the wait queue of max_requests_per_host (core/upstream/wait_queue.h)
extern const FamilySpec kQueueLength;
extern const FamilySpec kQueued;
extern const FamilySpec kQueueDispatched;
extern const FamilySpec kQueueTimeouts;
extern const FamilySpec kQueueOverflows;
extern const FamilySpec kQueueCancelled;
// ---- resilience, per cluster (retries, budget, circuit breakers, timeouts)
extern const FamilySpec kUpstreamRetryReasons;
extern const FamilySpec kUpstreamRetriesActive;
extern const FamilySpec kUpstreamRetryBudgetExhausted;
extern const FamilySpec kUpstreamCircuitBreakerOverflow;
extern const FamilySpec kUpstreamTimeoutKinds;
extern const FamilySpec kUpstreamResponseHeadersTooLarge;
extern const FamilySpec kDownstreamTimeoutKinds;

// ---- process
extern const FamilySpec kDiscoveryUpdates;
extern const FamilySpec kPluginHookErrors;

// ---- filters, per listener and filter entry (name as in the YAML)
extern const FamilySpec kFilterCalls;
extern const FamilySpec kFilterLocalReplies;
extern const FamilySpec kFilterErrors;
// 2 us .. 1 s: time in a filter is usually microseconds.
const Buckets& filterBuckets();
extern const FamilySpec kFilterDuration;

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
