// The Stream's upstream attempts: pick a host, connect or reuse, send, retry, give up.
#include "core/proxy/stream.h"

#include "core/common/log.h"
#include "core/http/serialize.h"
#include "core/proxy/downstream.h"
#include "core/proxy/hash_key.h"
#include "core/proxy/local_reply.h"
#include "core/proxy/router.h"
#include "core/proxy/stream_internal.h"
#include "core/upstream/host_limit.h"

namespace sluice::proxy {

using internal::kLowWatermark;
using internal::nowUs;

using internal::outcomeFor;

namespace {

ResponseFlag responseFlagFor(upstream::UpstreamError error) {
  switch (error) {
    case upstream::UpstreamError::kConnectFailed:
    case upstream::UpstreamError::kConnectTimeout:
      return kUpstreamConnectFailure;
    case upstream::UpstreamError::kTimeout:
      return kUpstreamTimeout;
    case upstream::UpstreamError::kBadResponse:
      return kUpstreamBadResponse;
    case upstream::UpstreamError::kReset:
      break;
  }
  return kUpstreamReset;
}

}  // namespace

void Stream::startAttempt() {
  if (finished_) return;
  std::string key = hashKey(cluster_->info().config.hash_key, request_, conn_.clientIp());
  sluice_pick_context ctx{};
  ctx.struct_size = sizeof(ctx);
  ctx.hash_key = sluice_str{key.data(), key.size()};
  ctx.tried = tried_.data();
  ctx.tried_count = tried_.size();
  int64_t index = pickHost(ctx);  // reserves the host's slot (stream_queue.cc)
  if (index == kWaiting) return;
  if (index < 0) {
    info_.setFlag(kNoHealthyHost);
    cluster_->info().stats->no_healthy_host.inc();
    gatewayError(503, "no healthy upstream host in cluster '" + cluster_->name() + "'");
    return;
  }
  const auto& hosts = cluster_->hosts();
  host_index_ = static_cast<uint32_t>(index);
  host_set_version_ = hosts->version();
  host_ = hosts->at(host_index_).host;
  info_.upstream_host = host_->address();
  tried_.push_back(host_index_);
  host_->totalRequests().fetch_add(1, std::memory_order_relaxed);
  attempt_active_ = true;
  attempt_start_us_ = nowUs();
  last_upstream_status_ = 0;

  const config::Cluster& cc = cluster_->info().config;
  upstream_ = runtime_.pool().acquire(host_.get());
  if (upstream_ != nullptr) {
    upstream_->attach(this, head_request_, !upgrade_.empty());
    flushPending();
  } else {
    if (!admitConnection()) return;  // a circuit breaker answered 503
    const http::ParserLimits limits = upstream::UpstreamConnection::responseLimits(
        cc.max_response_header_bytes, cc.max_response_header_count);
    upstream_ = upstream::UpstreamConnection::connect(
        runtime_.worker(), host_, cc.connect_timeout_ms, cluster_->info().tls.get(),
        cluster_->tlsSessions(), &limits);
    upstream_->countIn(cluster_->sharedState());
    upstream_->attach(this, head_request_, !upgrade_.empty());
  }
}

evbuffer* Stream::requestSink() {
  return (upstream_ != nullptr && upstream_->connected() && sent_upstream_) ? upstream_->output()
                                                                            : pendingBuffer();
}

void Stream::restartPending(evbuffer* body) {
  evbuffer* p = pendingBuffer();
  evbuffer_drain(p, evbuffer_get_length(p));
  writeUpstreamHead(p);
  const size_t n = body != nullptr ? evbuffer_get_length(body) : 0;
  if (n > 0) evbuffer_add(p, evbuffer_pullup(body, -1), n);
}

void Stream::flushPending() {
  if (upstream_ == nullptr || !upstream_->connected()) return;
  sent_upstream_ = true;
  evbuffer* out = upstream_->output();
  if (head_due_) {
    head_due_ = false;
    writeUpstreamHead(out);
  }
  if (pending_ != nullptr) evbuffer_add_buffer(out, pending_);
  // The pool's idle timeout gives way to response_timeout_ms once the request is sent (none
  // while a body still streams: a slow upload is not a slow upstream).
  upstream_->setReadTimeout(request_sent_end_ ? cluster_->info().config.response_timeout_ms : 0);
}

void Stream::onUpstreamConnected() {
  releasePending();
  flushPending();
}

void Stream::onUpstreamWritable() {
  if (request_paused_ && upstream_ != nullptr && upstream_->outputLength() <= kLowWatermark) {
    request_paused_ = false;
    if (!request_sent_end_) upstream_->setReadTimeout(0);  // the upload moves again
    if (!hold_request_) conn_.resumeReading();
  }
}

uint64_t Stream::endAttempt(sluice_outcome outcome) {
  if (!attempt_active_) return 0;
  attempt_active_ = false;
  releasePending();
  releaseRetry();  // a retry counts against the budget until its attempt ends
  upstream::release(*host_);
  // The freed slot goes to the oldest request waiting in the cluster's queue, on any worker.
  if (cluster_ != nullptr && cluster_->queue() != nullptr) cluster_->queue()->onSlotFreed();
  const uint64_t latency_us = nowUs() - attempt_start_us_;
  if (cluster_ != nullptr) {
    cluster_->onResult(host_, host_index_, host_set_version_, outcome, latency_us);
  }
  return latency_us;
}

bool Stream::staleConnection(upstream::UpstreamError error) const {
  // A pooled keep-alive connection the upstream closed just as we sent on it: the request
  // most likely never reached the application. Resending is safe for idempotent requests
  // without a body (RFC 9110 §9.2.2), and costs no retry budget (once per request).
  return !stale_retried_ && !response_started_ && error == upstream::UpstreamError::kReset &&
         upstream_ != nullptr && upstream_->reused() && last_upstream_status_ == 0 &&
         request_complete_ && request_.framing == http::Framing::kNone &&
         (request_.method == "GET" || request_.method == "HEAD" || request_.method == "OPTIONS");
}

void Stream::onUpstreamError(upstream::UpstreamError error, const std::string& detail) {
  if (finished_) {
    dropUpstream();
    return;
  }
  using upstream::UpstreamError;
  const stats::ClusterStats& cs = *cluster_->info().stats;
  const bool stale = staleConnection(error);
  const bool sent = sent_upstream_;
  const bool before_head = last_upstream_status_ == 0 && !response_started_;
  if (upstream_ != nullptr && upstream_->headerLimitExceeded()) {
    cs.response_headers_too_large.inc();
  }
  endAttempt(outcomeFor(error));
  if (!stale) info_.setFlag(responseFlagFor(error));  // a stale pooled connection is no failure
  if (error == UpstreamError::kConnectTimeout) {
    cs.timeouts[stats::ClusterStats::kConnectTimeout].inc();
  } else if (error == UpstreamError::kTimeout) {
    cs.timeouts[before_head ? stats::ClusterStats::kPerTryTimeout
                            : stats::ClusterStats::kResponseBodyTimeout]
        .inc();
  }
  if (host_ != nullptr) {
    const stats::HostStats& hs = host_->stats();
    if (error == UpstreamError::kConnectFailed || error == UpstreamError::kConnectTimeout) {
      hs.connect_failures.inc();
    } else if (error == UpstreamError::kTimeout) {
      hs.timeouts.inc();
    } else {
      hs.resets.inc();
    }
  }
  dropUpstream();
  if (stale) {
    // The host is fine; only the connection was stale: resend at once, no budget.
    SLUICE_LOG(kDebug, "upstream ", host_->address(), ": ", detail, " (stale; resending)");
    stale_retried_ = true;
    tried_.pop_back();
    cs.retries.inc();
    cs.retry_reasons[stats::ClusterStats::kRetryStaleConnection].inc();
    ++info_.retries;
    restartPending(nullptr);
    sent_upstream_ = false;
    startAttempt();
    return;
  }
  int reason = retryReasonFor(error, sent);
  if (reason >= 0 && tryRetry(reason, sent)) {
    SLUICE_LOG(kDebug, "upstream ", host_->address(), " in cluster ", cluster_->name(), ": ",
               detail, " (retrying)");
    return;
  }
  SLUICE_LOG(kDebug, "upstream ", host_ != nullptr ? host_->address() : "?", " in cluster ",
             cluster_->name(), ": ", detail);
  if (response_started_) {
    // Bytes already went downstream: all we can do is cut the connection.
    info_.setFlag(kResponseTruncated);
    conn_.abort();
    return;
  }
  bool timeout = error == UpstreamError::kTimeout || error == UpstreamError::kConnectTimeout;
  uint32_t status = timeout ? 504 : 502;
  std::string what = "upstream " + host_->address() + " in cluster '" + cluster_->name() + "': ";
  if (retry_status_ != 0) {
    // An earlier try's 5xx was discarded for this retry: the client learns that status.
    status = retry_status_;
    what = "upstream answered " + std::to_string(retry_status_) + "; the retry failed: " + what;
  }
  gatewayError(status, what + detail);
}

}  // namespace sluice::proxy
