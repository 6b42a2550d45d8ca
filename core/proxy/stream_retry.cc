// The Stream's resilience: admission to the cluster (max_requests), the connection breakers,
// retry conditions, the retry budget, backoff between tries, the whole-request timeout and
// the deadline sent upstream. docs/configuration.md (`retry_policy`, `circuit_breakers`,
// `request_timeout_ms`, `deadline_header`) describes the behaviour.
#include <event2/event.h>

#include <algorithm>

#include "core/common/log.h"
#include "core/event/timeval.h"
#include "core/http/serialize.h"
#include "core/proxy/stream.h"
#include "core/proxy/stream_internal.h"

namespace sluice::proxy {

using internal::nowUs;
using stats::ClusterStats;
using upstream::ClusterState;
using upstream::UpstreamError;

namespace {

// "123" → 123 (ms); false for anything but 1..10 decimal digits.
bool parseMs(std::string_view v, uint64_t* out) {
  if (v.empty() || v.size() > 10) return false;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = n;
  return true;
}

}  // namespace

bool Stream::idempotent() const {
  // RFC 9110 §9.2.2. An upgrade request switches protocols on success: never resent.
  const std::string& m = request_.method;
  return upgrade_.empty() && (m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "TRACE" ||
                              m == "PUT" || m == "DELETE");
}

bool Stream::admitRequest(const config::Route* route) {
  const upstream::ClusterInfo& ci = cluster_->info();
  const config::Cluster& cc = ci.config;
  retry_on_ = route != nullptr && route->retry_on ? *route->retry_on : cc.retry_policy.retry_on;
  retries_left_ = cc.retry_policy.retries;
  uint32_t timeout_ms =
      route != nullptr && route->timeout_ms ? *route->timeout_ms : cc.request_timeout_ms;
  if (timeout_ms != 0) deadline_us_ = start_us_ + uint64_t{timeout_ms} * 1000;
  const std::string& trusted = chain_->info().config.trusted_deadline_header;
  if (!trusted.empty()) {
    // Every field and list element counts and the tightest wins: two hops' budgets combined
    // (or a field repeated) must never leave a request more time than either gave it. Values
    // that are not whole milliseconds are ignored.
    for (size_t i = 0; const std::string_view* v = request_.headers.get(trusted, i); ++i) {
      http::forEachListElement(*v, [&](std::string_view el) {
        uint64_t ms = 0;
        if (!parseMs(el, &ms)) return;
        uint64_t d = start_us_ + ms * 1000;
        if (deadline_us_ == 0 || d < deadline_us_) deadline_us_ = d;
      });
    }
    request_.headers.remove(trusted);  // consumed here; the cluster's deadline_header goes on
  }
  ClusterState& st = cluster_->state();
  if (!ClusterState::tryAcquire(st.active_requests, cc.circuit_breakers.max_requests)) {
    ci.stats->breaker_overflow[ClusterStats::kMaxRequests].inc();
    info_.setFlag(kUpstreamOverflow);
    gatewayError(503, "circuit breaker max_requests of cluster '" + cluster_->name() + "' is open");
    return false;
  }
  counted_request_ = true;
  if (deadline_us_ != 0) {
    uint64_t now = nowUs();
    if (now >= deadline_us_) {
      ci.stats->timeouts[ClusterStats::kDeadlineExpired].inc();
      info_.setFlag(kRequestTimeout);
      gatewayError(504, "the request's deadline passed before it could be sent upstream");
      return false;
    }
    request_timer_ = evtimer_new(runtime_.worker().base(), &Stream::onRequestTimer, this);
    timeval tv = event::toTimeval(static_cast<uint32_t>((deadline_us_ - now + 999) / 1000));
    evtimer_add(request_timer_, &tv);
  }
  // Only a body needs a copy for a resend (none is kept when no retry can happen).
  if (retries_left_ == 0) {
    replay_ok_ = false;
  } else if (request_.framing != http::Framing::kNone) {
    replay_ = evbuffer_new();
  }
  return true;
}

bool Stream::admitConnection() {
  const upstream::ClusterInfo& ci = cluster_->info();
  const config::CircuitBreakers& cb = ci.config.circuit_breakers;
  ClusterState& st = cluster_->state();
  int breaker = -1;
  if (cb.max_connections != 0 &&
      st.connections.load(std::memory_order_relaxed) >= int64_t{cb.max_connections}) {
    breaker = ClusterStats::kMaxConnections;
  } else if (!ClusterState::tryAcquire(st.pending_requests, cb.max_pending_requests)) {
    breaker = ClusterStats::kMaxPendingRequests;
  } else {
    pending_counted_ = true;
    return true;
  }
  ci.stats->breaker_overflow[breaker].inc();
  info_.setFlag(kUpstreamOverflow);
  endAttempt(SLUICE_OUTCOME_CANCELLED);
  gatewayError(503, std::string("circuit breaker ") +
                        (breaker == ClusterStats::kMaxConnections ? "max_connections"
                                                                  : "max_pending_requests") +
                        " of cluster '" + cluster_->name() + "' is open");
  return false;
}

int Stream::retryReasonFor(UpstreamError error, bool sent) const {
  if (response_started_ || downstream_interim_ || last_upstream_status_ != 0) return -1;
  // After bytes went upstream only an idempotent request whose whole body we still hold may go
  // again; before, any request may.
  const bool resendable = !sent || (idempotent() && bodyHeld());
  switch (error) {
    case UpstreamError::kConnectFailed:
    case UpstreamError::kConnectTimeout:
      if ((retry_on_ & config::kRetryOnConnectFailure) == 0) return -1;
      return resendable ? ClusterStats::kRetryConnectFailure : -1;
    case UpstreamError::kReset:
      if ((retry_on_ & config::kRetryOnReset) == 0) return -1;
      return resendable ? ClusterStats::kRetryReset : -1;
    case UpstreamError::kTimeout:
      if ((retry_on_ & config::kRetryOnPerTryTimeout) == 0) return -1;
      return idempotent() && resendable ? ClusterStats::kRetryPerTryTimeout : -1;
    case UpstreamError::kBadResponse:
      break;
  }
  return -1;
}

bool Stream::tryRetry(int reason, bool sent) {
  if (retries_left_ == 0 || finished_) return false;
  if (deadline_us_ != 0 && nowUs() >= deadline_us_) return false;
  const upstream::ClusterInfo& ci = cluster_->info();
  const config::RetryPolicy& rp = ci.config.retry_policy;
  ClusterState& st = cluster_->state();
  // The budget counts every retry in flight, those waiting in backoff included, against the
  // requests in flight that are on their first try: when it binds, the upstreams see at most
  // (1 + budget_percent/100) x the requests. A try that sent nothing (refused, unreachable,
  // connect timeout) reached no application, so its retry adds no upstream load and needs no
  // budget: a host that dies under load fails a burst of connects at once, and a budget sized
  // for amplification would turn that burst into client errors. It still counts as retrying
  // (for max_retries and for the others' budget).
  const int64_t retrying = st.active_retries.load(std::memory_order_relaxed);
  const int64_t first_tries = st.active_requests.load(std::memory_order_relaxed) - retrying;
  int64_t allowed = std::max<int64_t>(rp.min_retry_concurrency,
                                      std::max<int64_t>(first_tries, 0) * rp.budget_percent / 100);
  if (sent && retrying >= allowed) {
    ci.stats->retry_budget_exhausted.inc();
    info_.setFlag(kRetryBudgetExhausted);
    return false;
  }
  if (!ClusterState::tryAcquire(st.active_retries, ci.config.circuit_breakers.max_retries)) {
    ci.stats->breaker_overflow[ClusterStats::kMaxRetries].inc();
    info_.setFlag(kUpstreamOverflow);
    return false;
  }
  holds_retry_ = true;
  ci.stats->retries_active.inc();
  --retries_left_;
  ++info_.retries;
  ci.stats->retries.inc();
  ci.stats->retry_reasons[reason].inc();
  // Exponential backoff with "equal jitter": half the interval fixed, half random, so tries
  // are spaced by at least base/2 and herds of retries spread out.
  uint64_t interval = rp.backoff_base_ms;
  for (uint32_t i = 1; i < info_.retries && interval < rp.backoff_max_ms; ++i) interval *= 2;
  interval = std::min<uint64_t>(interval, rp.backoff_max_ms);
  uint64_t delay_ms =
      interval / 2 + (interval > 0 ? runtime_.worker().random() % (interval / 2 + 1) : 0);
  if (backoff_timer_ == nullptr) {
    backoff_timer_ = evtimer_new(runtime_.worker().base(), &Stream::onBackoffTimer, this);
  }
  timeval tv = event::toTimeval(static_cast<uint32_t>(delay_ms));
  evtimer_add(backoff_timer_, &tv);
  return true;
}

void Stream::onBackoffTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Stream*>(arg);
  if (self->finished_) return;
  if (self->bodyHeld()) {
    // A fresh head (the deadline header changed) and the body as far as it arrived; the rest
    // follows into pending_ until the new connection is up.
    self->restartPending(self->replay_);
  }
  self->sent_upstream_ = false;
  self->startAttempt();
}

void Stream::onRequestTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Stream*>(arg);
  // libevent's coarse clock (core/event/worker.cc) may end the wait up to a jiffy early: the
  // deadline is by CLOCK_MONOTONIC (nowUs), so wait for the rest.
  const uint64_t now = nowUs();
  if (now < self->deadline_us_) {
    timeval tv = event::toTimevalUs(self->deadline_us_ - now);
    evtimer_add(self->request_timer_, &tv);
    return;
  }
  self->onRequestTimeout();
}

void Stream::onRequestTimeout() {
  if (finished_ || response_started_) return;  // the deadline covers up to the response head
  if (queue_timer_ != nullptr && queue_ != nullptr) {
    queue_->stats().timeouts.inc();  // it waited in the queue until its deadline
    leaveQueue();
  }
  if (!request_complete_ && !request_paused_) {
    // The client has not finished sending its body (and nothing upstream holds it back): the
    // client stalled, not the upstream (RFC 9110 §15.5.9).
    if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
    if (backoff_timer_ != nullptr) evtimer_del(backoff_timer_);
    info_.setFlag(kDownstreamTimeout);
    info_.setFlag(kRequestTimeout);
    request_complete_ = true;  // nothing more is read: the connection closes after the reply
    gatewayError(408, "the request body did not arrive within the request's timeout");
    return;
  }
  cluster_->info().stats->timeouts[ClusterStats::kRequestTimeout].inc();
  info_.setFlag(kRequestTimeout);
  info_.setFlag(kUpstreamTimeout);
  if (backoff_timer_ != nullptr) evtimer_del(backoff_timer_);
  // The host did not necessarily fail (the budget may have gone on earlier tries or queueing):
  // the attempt counts as cancelled for the balancer and outlier detection.
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  SLUICE_LOG(kDebug, "request timeout in cluster ", cluster_->name());
  if (retry_status_ != 0) {
    gatewayError(retry_status_, "upstream answered " + std::to_string(retry_status_) +
                                    "; the request timed out while retrying");
    return;
  }
  gatewayError(504, "no upstream response within the request's timeout in cluster '" +
                        cluster_->name() + "'");
}

void Stream::writeUpstreamHead(evbuffer* out) {
  const std::string& name = cluster_ != nullptr ? cluster_->info().config.deadline_header : "";
  if (!name.empty()) {
    if (deadline_us_ != 0) {
      uint64_t now = nowUs();
      uint64_t left_ms = now >= deadline_us_ ? 0 : (deadline_us_ - now) / 1000;
      request_.headers.set(name, std::to_string(left_ms));
    } else {
      request_.headers.remove(name);  // no budget: a client's value must not pass as ours
    }
  }
  http::writeRequestHead(out, request_.method, upstream_path_, request_.headers, request_.framing,
                         request_.content_length);
}

void Stream::releasePending() {
  if (!pending_counted_) return;
  pending_counted_ = false;
  ClusterState::release(cluster_->state().pending_requests);
}

void Stream::releaseRetry() {
  if (!holds_retry_) return;
  holds_retry_ = false;
  ClusterState::release(cluster_->state().active_retries);
  cluster_->info().stats->retries_active.dec();
}

void Stream::releaseResilience() {
  if (backoff_timer_ != nullptr) {
    event_free(backoff_timer_);
    backoff_timer_ = nullptr;
  }
  if (request_timer_ != nullptr) {
    event_free(request_timer_);
    request_timer_ = nullptr;
  }
  if (cluster_ == nullptr) return;
  releasePending();
  releaseRetry();
  if (counted_request_) {
    counted_request_ = false;
    ClusterState::release(cluster_->state().active_requests);
  }
}

}  // namespace sluice::proxy
