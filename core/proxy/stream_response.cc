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
  response_.reason = std::move(head.reason);  // (cheaper than swap for short strings)
  response_.headers.swap(head.headers);
  response_.version_minor = head.version_minor;
  response_.framing = head.framing;
  response_.content_length = head.content_length;
  response_.keep_alive = head.keep_alive;
  http::stripHopByHop(response_.headers);
  fm_.encodeHeaders(response_.framing == http::Framing::kNone || head_request_, false);
  return head_request_ ? 1 : 0;
}

bool Stream::retryOnStatus(uint32_t status) {
  const uint32_t bit = status == 502   ? uint32_t{config::kRetryOn502}
                       : status == 503 ? uint32_t{config::kRetryOn503}
                       : status == 504 ? uint32_t{config::kRetryOn504}
                                       : 0u;
  if (bit == 0 || (retry_on_ & bit) == 0 || response_started_ || downstream_interim_) return false;
  if (!idempotent() || !bodyHeld()) return false;
  const int reason = status == 502   ? stats::ClusterStats::kRetry502
                     : status == 503 ? stats::ClusterStats::kRetry503
                                     : stats::ClusterStats::kRetry504;
  return tryRetry(reason, true);  // the upstream answered: it saw the request
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
  output_before_ = conn_.outputLength();
  http::writeResponseHead(conn_.output(), st, response_.reason, response_.headers, framing, length,
                          close, !client11 && !close);
}

void Stream::onUpstreamBody(const char* data, size_t len) {
  if (finished_) return;
  fm_.encodeData(data, len, false);
}

void Stream::onEncodedData(const char* data, size_t len, bool end) {
  evbuffer* out = conn_.output();
  if (len > 0) {
    info_.bytes_out += len;
    if (rechunk_) {
      http::writeChunk(out, data, len);
    } else if (upstream_ == nullptr || !upstream_->moveBody(out, data, len)) {
      evbuffer_add(out, data, len);  // (moveBody: the upstream's piece, its chain relinked)
    }
  }
  if (end) {
    if (rechunk_) http::writeLastChunk(out);
    response_complete_ = true;
    finish(close_after_ || !request_complete_);
    return;
  }
  if (evbuffer_get_length(out) > kHighWatermark && !response_paused_ && upstream_ != nullptr) {
    response_paused_ = true;
    upstream_->pauseReading();
  }
}

void Stream::onDownstreamWritable() {
  if (flushing_) {
    if (conn_.outputLength() <= kLowWatermark) finish(flush_close_);
    return;
  }
  if (response_paused_ && upstream_ != nullptr && conn_.outputLength() <= kLowWatermark) {
    response_paused_ = false;
    if (!hold_response_) upstream_->resumeReading();
  }
}

void Stream::onUpstreamComplete() {
  if (last_upstream_status_ < 200) return;  // interim response: the final one follows
  if (finished_) return;
  if (upstream_ != nullptr) {
    // An upgrade request's connection is not reused: an upstream that declined may still
    // have switched its own state (RFC 9110 §7.8 lets it ignore Upgrade, not all do cleanly).
    if (request_sent_end_ && upstream_->reusable() && upgrade_.empty()) {
      const config::Cluster& cc = cluster_->info().config;
      runtime_.pool().release(std::move(upstream_), cc.max_idle_connections, cc.idle_timeout_ms);
    } else {
      // Mid-request (the upstream answered before the body ended) or not keep-alive.
      dropUpstream();
    }
  }
  // The end goes through the response filters after the body (it may wait at a paused one).
  fm_.encodeData("", 0, true);
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
  FilterReply reply;
  reply.status = status;
  reply.content_type = std::string(content_type);
  reply.body = std::move(body);
  sendReply(std::move(reply), close, true);
}

void Stream::sendReply(FilterReply reply, bool close, bool filtered) {
  if (finished_ || response_complete_) return;  // answered already (a body left to discard)
  if (response_started_) {
    info_.setFlag(kResponseTruncated);
    conn_.abort();
    return;
  }
  info_.setFlag(kLocalReply);
  fm_.stop(FilterDir::kRequest);  // nothing more of the request is filtered or sent upstream
  leaveQueue();
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  dropUpstream();
  upgrade_head_ = false;
  response_.clear();
  response_.status = reply.status;
  if (!reply.content_type.empty()) response_.headers.add("Content-Type", reply.content_type);
  for (auto& [name, value] : reply.headers) response_.headers.add(name, value);
  if (retry_after_s_ > 0 && !response_.headers.has("retry-after")) {
    response_.headers.add("Retry-After", std::to_string(retry_after_s_));
  }
  local_reply_ = true;
  local_close_ = close;
  local_body_ = std::move(reply.body);
  if (filtered) {
    // Response filters see local replies too (request ids, added headers).
    fm_.encodeHeaders(local_body_.empty(), true);
  } else {
    fm_.stop(FilterDir::kResponse);
    writeLocalReply();
  }
}

void Stream::writeLocalReply() {
  if (finished_ || response_started_) return;
  const uint32_t status = response_.status;
  const bool close =
      local_close_ || !request_.keep_alive || conn_.closeRequested() || replyMustClose();
  const bool no_body = head_request_ || status == 204 || status == 304;
  response_started_ = true;
  output_before_ = conn_.outputLength();
  http::writeResponseHead(conn_.output(), status, "", response_.headers,
                          status == 204 ? http::Framing::kNone : http::Framing::kContentLength,
                          local_body_.size(), close, request_.version_minor == 0 && !close);
  if (!no_body) {
    evbuffer_add(conn_.output(), local_body_.data(), local_body_.size());
    info_.bytes_out += local_body_.size();
  }
  local_body_.clear();
  response_complete_ = true;
  close_after_ = close;
  if (request_complete_ || close) finish(close);
}

}  // namespace sluice::proxy
