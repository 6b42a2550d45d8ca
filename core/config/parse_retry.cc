// Resilience settings of a cluster: `retry_policy`, `circuit_breakers`, `request_timeout_ms`,
// the upstream response limits and `deadline_header`; the `retry_on` list (also on routes).
#include <string>

#include "core/config/parse.h"

namespace sluice::config::internal {
namespace {

void parseRetryPolicy(const Field& field, Context& ctx, RetryPolicy* out) {
  forEachField(field, "retry_policy",
               {"retries", "retry_on", "backoff_base_ms", "backoff_max_ms", "budget_percent",
                "min_retry_concurrency", "max_body_bytes"},
               ctx, [&](const Field& f) {
                 if (f.key == "retries") {
                   readUint32(f, 0, 10, ctx, &out->retries);
                 } else if (f.key == "retry_on") {
                   parseRetryOn(f, ctx, &out->retry_on);
                 } else if (f.key == "backoff_base_ms") {
                   readUint32(f, 0, 60000, ctx, &out->backoff_base_ms);
                 } else if (f.key == "backoff_max_ms") {
                   readUint32(f, 0, 600000, ctx, &out->backoff_max_ms);
                 } else if (f.key == "budget_percent") {
                   readUint32(f, 0, 100, ctx, &out->budget_percent);
                 } else if (f.key == "min_retry_concurrency") {
                   readUint32(f, 0, 1000000, ctx, &out->min_retry_concurrency);
                 } else {
                   readUint64(f, 0, 1ull << 30, ctx, &out->max_body_bytes);
                 }
               });
  if (out->backoff_max_ms < out->backoff_base_ms) {
    ctx.error(field.mark, cat(field.label, ": backoff_max_ms (", out->backoff_max_ms,
                              ") is below backoff_base_ms (", out->backoff_base_ms, ")"));
  }
}

void parseCircuitBreakers(const Field& field, Context& ctx, CircuitBreakers* out) {
  forEachField(field, "circuit_breakers",
               {"max_connections", "max_pending_requests", "max_requests", "max_retries"}, ctx,
               [&](const Field& f) {
                 uint32_t* target = f.key == "max_connections"        ? &out->max_connections
                                    : f.key == "max_pending_requests" ? &out->max_pending_requests
                                    : f.key == "max_requests"         ? &out->max_requests
                                                                      : &out->max_retries;
                 readUint32(f, 0, 100000000, ctx, target);
               });
}

}  // namespace

void parseRetryOn(const Field& field, Context& ctx, uint32_t* out) {
  uint32_t bits = 0;
  bool ok = forEachItem(field, ctx, [&](const Field& item) {
    std::string v;
    if (!readString(item, ctx, &v)) return;
    if (v == "connect_failure") {
      bits |= kRetryOnConnectFailure;
    } else if (v == "reset") {
      bits |= kRetryOnReset;
    } else if (v == "502") {
      bits |= kRetryOn502;
    } else if (v == "503") {
      bits |= kRetryOn503;
    } else if (v == "504") {
      bits |= kRetryOn504;
    } else if (v == "5xx") {
      bits |= kRetryOn502 | kRetryOn503 | kRetryOn504;
    } else if (v == "per_try_timeout") {
      bits |= kRetryOnPerTryTimeout;
    } else {
      ctx.error(item.mark, cat(item.label, ": unknown retry condition '", v,
                               "' (allowed: connect_failure, reset, 502, 503, 504, 5xx, "
                               "per_try_timeout)"));
    }
  });
  if (ok) *out = bits;
}

bool isResilienceKey(std::string_view key) {
  return key == "retry_policy" || key == "circuit_breakers" || key == "request_timeout_ms" ||
         key == "max_response_header_bytes" || key == "max_response_header_count" ||
         key == "deadline_header";
}

void parseResilienceSetting(const Field& f, Context& ctx, Cluster* out) {
  if (f.key == "retry_policy") {
    parseRetryPolicy(f, ctx, &out->retry_policy);
  } else if (f.key == "circuit_breakers") {
    parseCircuitBreakers(f, ctx, &out->circuit_breakers);
  } else if (f.key == "request_timeout_ms") {
    readUint32(f, 0, UINT32_MAX, ctx, &out->request_timeout_ms);
  } else if (f.key == "max_response_header_bytes") {
    readUint32(f, 1, 16u << 20, ctx, &out->max_response_header_bytes);
  } else if (f.key == "max_response_header_count") {
    readUint32(f, 1, 100000, ctx, &out->max_response_header_count);
  } else if (f.key == "deadline_header") {
    readHeaderName(f, ctx, &out->deadline_header);
  }
}

}  // namespace sluice::config::internal

namespace sluice::config {

std::string resilienceSettingsKey(const Cluster& c) {
  using internal::cat;
  const RetryPolicy& r = c.retry_policy;
  const CircuitBreakers& b = c.circuit_breakers;
  return cat(r.retries, ",", r.retry_on, ",", r.backoff_base_ms, ",", r.backoff_max_ms, ",",
             r.budget_percent, ",", r.min_retry_concurrency, ",", r.max_body_bytes, "|",
             b.max_connections, ",", b.max_pending_requests, ",", b.max_requests, ",",
             b.max_retries, "|", c.request_timeout_ms, ",", c.max_response_header_bytes, ",",
             c.max_response_header_count, ",", c.deadline_header);
}

}  // namespace sluice::config
