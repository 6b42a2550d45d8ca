// The Stream's response path: upstream heads and bodies to the client, local replies.
#include "core/proxy/stream.h"

#include "core/common/log.h"
#include "core/http/serialize.h"
#include "core/proxy/downstream.h"
#include "core/proxy/hash_key.h"
#include "core/proxy/local_reply.h"
#include "core/proxy/router.h"
#include "core/proxy/stream_internal.h"

namespace sluice::proxy {

using internal::kHighWatermark;
using internal::kLowWatermark;

using internal::declaredLength;
using internal::nowUs;

int Stream::onUpstreamHead(http::MessageHead& head) {
  if (head.status == 101) return onSwitchingProtocols(head);  // only to an upgrade request
  last_upstream_status_ = head.status;
  if (head.status < 200) {
    // Interim responses go to HTTP/1.1 clients (RFC 9110 §15.2), except a 100 after our own.
    if (request_.version_minor == 1 && !(head.status == 100 && sent_continue_) &&
        !response_started_) {
      http::stripHopByHop(head.headers);
      http::writeResponseHead(conn_.output(), head.status, head.reason, head.headers,
                              http::Framing::kNone, 0, false, false);
      downstream_interim_ = true;
    }
    return 0;
  }
  const bool attempted = attempt_active_;
  uint64_t latency_us =
      endAttempt(head.status >= 500 ? SLUICE_OUTCOME_HTTP_5XX : SLUICE_OUTCOME_SUCCESS);
  if (attempted) {
    info_.upstream_us = static_cast<int64_t>(latency_us);
    host_->stats().response(head.status, latency_us);
  }
  if (retryOnStatus(head.status)) {
    // Discarded: its connection is closed (never drained into the pool), and the next try
    // goes to another host after the backoff.
    retry_status_ = head.status;
    dropUpstream();  // detached: the parser reads on into nothing
    return 0;
  }
  // Take the fields; the parser keeps the scalars it still needs (framing, length, keep-alive).
  response_.status = head.status;
  response_.reason.swap(head.reason);
  response_.headers.mutableFields().swap(head.headers.mutableFields());
  response_.version_minor = head.version_minor;
  response_.framing = head.framing;
  response_.content_length = head.content_length;
  response_.keep_alive = head.keep_alive;
  http::stripHopByHop(response_.headers);
  if (!runResponseHeaderFilters()) return head_request_ ? 1 : 0;
  writeResponseHead();
  return head_request_ ? 1 : 0;
}

bool Stream::retryOnStatus(uint32_t status) {
  uint32_t bit = status == 502   ? config::kRetryOn502
                 : status == 503 ? config::kRetryOn503
                 : status == 504 ? config::kRetryOn504
                                 : 0;
  if (bit == 0 || (retry_on_ & bit) == 0 || response_started_ || downstream_interim_) return false;
  if (!idempotent() || !bodyHeld()) return false;
  const int reason = status == 502   ? stats::ClusterStats::kRetry502
                     : status == 503 ? stats::ClusterStats::kRetry503
                                     : stats::ClusterStats::kRetry504;
  return tryRetry(reason, true);  // the upstream answered: it saw the request
}

bool Stream::runResponseHeaderFilters() {
  const bool end_stream = response_.framing == http::Framing::kNone || head_request_;
  for (size_t i = filters_created_; i-- > 0;) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.on_response_headers == nullptr) continue;
    ++hook_depth_;
    sluice_filter_status st = hooks.on_response_headers(filter_self_[i], handle(), end_stream);
    --hook_depth_;
    if (st == SLUICE_FILTER_STOP && filter_reply_pending_ && upstream_ != nullptr) {
      // Replace the upstream response by the filter's reply; that connection is mid-message.
      filter_reply_pending_ = false;
      info_.local_reply_filter = chain_->name(i);
      dropUpstream();
      sendLocalReply(filter_reply_status_, filter_reply_type_, std::move(filter_reply_body_), true);
      return false;
    }
  }
  filter_reply_pending_ = false;
  return true;
}

void Stream::writeResponseHead() {
  const bool client11 = request_.version_minor == 1;
  const uint32_t st = response_.status;
  http::Framing framing = response_.framing;
  uint64_t length = response_.content_length;
  bool close = !request_.keep_alive || conn_.closeRequested() || !request_complete_;
  if (head_request_ || st == 204 || st == 304) {
    framing = http::Framing::kNone;
    if (st != 204 && declaredLength(response_.headers, &length)) {
      framing = http::Framing::kContentLength;
    }
    rechunk_ = false;
  } else if (framing == http::Framing::kChunked || framing == http::Framing::kUntilClose) {
    rechunk_ = client11;
    framing = client11 ? http::Framing::kChunked : http::Framing::kUntilClose;
    if (!client11) close = true;  // never chunked to an HTTP/1.0 peer
  }
  close_after_ = close;
  response_started_ = true;
  http::writeResponseHead(conn_.output(), st, response_.reason, response_.headers, framing, length,
                          close, !client11 && !close);
}

void Stream::onUpstreamBody(const char* data, size_t len) {
  if (finished_) return;
  for (size_t i = filters_created_; i-- > 0;) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.on_response_body != nullptr &&
        hooks.on_response_body(filter_self_[i], handle(), data, len, 0) == SLUICE_FILTER_STOP) {
      info_.setFlag(kResponseTruncated);
      conn_.abort();
      return;
    }
  }
  info_.bytes_out += len;
  evbuffer* out = conn_.output();
  if (rechunk_) {
    http::writeChunk(out, data, len);
  } else {
    evbuffer_add(out, data, len);
  }
  if (evbuffer_get_length(out) > kHighWatermark && !response_paused_ && upstream_ != nullptr) {
    response_paused_ = true;
    upstream_->pauseReading();
  }
}

void Stream::onDownstreamWritable() {
  if (response_paused_ && upstream_ != nullptr &&
      evbuffer_get_length(conn_.output()) <= kLowWatermark) {
    response_paused_ = false;
    upstream_->resumeReading();
  }
}

void Stream::onUpstreamComplete() {
  if (last_upstream_status_ < 200) return;  // interim response: the final one follows
  if (finished_) return;
  for (size_t i = filters_created_; i-- > 0;) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.on_response_body != nullptr && !head_request_ &&
        response_.framing != http::Framing::kNone) {
      hooks.on_response_body(filter_self_[i], handle(), "", 0, 1);
    }
  }
  if (rechunk_) http::writeLastChunk(conn_.output());
  response_complete_ = true;
  if (upstream_ != nullptr) {
    // An upgrade request's connection is not reused: an upstream that declined may still
    // have switched its own state (RFC 9110 §7.8 lets it ignore Upgrade, not all do cleanly).
    if (request_complete_ && upstream_->reusable() && upgrade_.empty()) {
      const config::Cluster& cc = cluster_->info().config;
      runtime_.pool().release(std::move(upstream_), cc.max_idle_connections, cc.idle_timeout_ms);
    } else {
      // Mid-request (the upstream answered before the body ended) or not keep-alive.
      dropUpstream();
    }
  }
  finish(close_after_ || !request_complete_);
}

void Stream::gatewayError(uint32_t status, std::string_view detail) {
  if (status >= 500) {
    SLUICE_LOG(kWarn, request_.method, " ", original_target_, " from ", conn_.clientAddress(), ": ",
               status, " ", detail);
  }
  sendLocalReply(status, "application/json", errorBody(status, detail), true);
}

void Stream::sendLocalReply(uint32_t status, std::string_view content_type, std::string body,
                            bool close) {
  if (finished_) return;
  if (response_started_) {
    info_.setFlag(kResponseTruncated);
    conn_.abort();
    return;
  }
  info_.setFlag(kLocalReply);
  leaveQueue();
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  dropUpstream();
  response_.clear();
  response_.status = status;
  if (!content_type.empty()) response_.headers.add("Content-Type", content_type);
  if (retry_after_s_ > 0) response_.headers.add("Retry-After", std::to_string(retry_after_s_));
  // Response filters see local replies too (request ids, added headers); a STOP here is ignored.
  for (size_t i = filters_created_; i-- > 0;) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.on_response_headers != nullptr) {
      ++hook_depth_;
      hooks.on_response_headers(filter_self_[i], handle(), body.empty() ? 1 : 0);
      --hook_depth_;
    }
  }
  filter_reply_pending_ = false;
  close = close || !request_.keep_alive || conn_.closeRequested() || !request_complete_;
  const bool no_body = head_request_ || status == 204 || status == 304;
  response_started_ = true;
  http::writeResponseHead(conn_.output(), status, "", response_.headers,
                          status == 204 ? http::Framing::kNone : http::Framing::kContentLength,
                          body.size(), close, request_.version_minor == 0 && !close);
  if (!no_body) {
    evbuffer_add(conn_.output(), body.data(), body.size());
    info_.bytes_out += body.size();
  }
  response_complete_ = true;
  close_after_ = close;
  if (request_complete_ || close) finish(close);
}

}  // namespace sluice::proxy
