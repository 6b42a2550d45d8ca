#include "core/proxy/stream.h"

#include <algorithm>

#include "core/common/log.h"
#include "core/http/serialize.h"
#include "core/proxy/access_log.h"
#include "core/proxy/downstream.h"
#include "core/proxy/hash_key.h"
#include "core/proxy/local_reply.h"
#include "core/proxy/router.h"
#include "core/proxy/stream_internal.h"

namespace sluice::proxy {

using internal::kHighWatermark;
using internal::kLowWatermark;

namespace internal {

std::string absoluteFormAuthority(const std::string& target) {
  if (!target.empty() && target[0] == '/') return {};  // origin form (nearly every request)
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() > scheme.size() &&
        http::equalsIgnoreCase(std::string_view(target).substr(0, scheme.size()), scheme)) {
      std::string_view rest = std::string_view(target).substr(scheme.size());
      std::string_view auth = rest.substr(0, rest.find_first_of("/?#"));
      size_t at = auth.rfind('@');  // userinfo is not part of Host
      if (at != std::string_view::npos) auth.remove_prefix(at + 1);
      return std::string(auth);
    }
  }
  return {};
}

sluice_outcome outcomeFor(upstream::UpstreamError e) {
  switch (e) {
    case upstream::UpstreamError::kConnectFailed:
    case upstream::UpstreamError::kConnectTimeout:
      return SLUICE_OUTCOME_CONNECT_FAILURE;
    case upstream::UpstreamError::kTimeout:
      return SLUICE_OUTCOME_TIMEOUT;
    case upstream::UpstreamError::kReset:
    case upstream::UpstreamError::kBadResponse:
      return SLUICE_OUTCOME_RESET;
  }
  return SLUICE_OUTCOME_RESET;
}

bool declaredLength(const http::HeaderMap& h, uint64_t* out) {
  const std::string_view* v = h.get("content-length");
  if (v == nullptr || v->empty() || v->size() > 19) return false;
  uint64_t n = 0;
  for (char c : *v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = n;
  return true;
}

}  // namespace internal

Stream::Stream(DownstreamConnection& conn, WorkerRuntime& runtime,
               std::shared_ptr<WorkerFilterChain> chain)
    : conn_(conn),
      runtime_(runtime),
      chain_(std::move(chain)),
      fm_(*this, runtime.worker().base(), handle()) {
  info_.start_unix_us = wallClockUs();
  info_.start_mono_us = internal::nowUs();
  info_.client_address = conn_.clientAddress();
  info_.tls_version = conn_.tlsVersion();
  info_.sni = conn_.tlsSni();
  info_.listener = chain_->info().config.name;
  info_.context = &context_;
}

Stream::~Stream() {
  leaveQueue();
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  dropUpstream();
  releaseResilience();
  if (replay_ != nullptr) evbuffer_free(replay_);
  callOnLog();
  fm_.destroyFilters();
  if (pending_ != nullptr) evbuffer_free(pending_);
}

void Stream::dropUpstream() {
  if (upstream_ == nullptr) return;
  // Detach first: the connection may still be inside its read callback, and nothing it parses
  // from now on may reach this stream.
  upstream_->detach();
  runtime_.worker().deferDelete(std::move(upstream_));
}

const std::string& Stream::clientAddress() const { return conn_.clientAddress(); }

uint32_t Stream::workerIndex() const { return runtime_.worker().index(); }

http::HeaderMap& Stream::headers(sluice_header_map map) {
  return map == SLUICE_HEADERS_RESPONSE ? response_.headers : request_.headers;
}

// ---------------------------------------------------------------- request path

void Stream::onRequestHead(http::MessageHead& head) {
  // As std::swap(request_, head) (request_ is still empty), without its three moves of every
  // string: the parser's strings are left empty, as the swap left them.
  request_.method = std::move(head.method);
  request_.target = std::move(head.target);
  std::swap(request_.status, head.status);
  request_.reason = std::move(head.reason);
  std::swap(request_.version_minor, head.version_minor);
  std::swap(request_.headers, head.headers);
  std::swap(request_.framing, head.framing);
  std::swap(request_.content_length, head.content_length);
  std::swap(request_.keep_alive, head.keep_alive);
  original_target_ = request_.target;
  head_request_ = request_.method == "HEAD";
  info_.method = request_.method;
  info_.path = original_target_;
  info_.protocol = protocolName(request_.version_minor);
  start_us_ = info_.start_mono_us;  // the stream was made for this head just now
  chain_->info().stats->received.inc();

  if (request_.method == "CONNECT") {
    gatewayError(501, "CONNECT is not supported");
    return;
  }
  if (const std::string_view* expect = request_.headers.get(http::HeaderId::kExpect)) {
    if (!http::equalsIgnoreCase(*expect, "100-continue") ||
        request_.headers.count(http::HeaderId::kExpect) > 1) {
      gatewayError(417, "only Expect: 100-continue is supported");
      return;
    }
    // We answer 100 Continue ourselves once the request is routed (RFC 9110 §10.1.1).
    expect_continue_ = request_.version_minor == 1 && request_.framing != http::Framing::kNone;
    request_.headers.remove(http::HeaderId::kExpect);
  }

  // Headers as they will go upstream: hop-by-hop gone, proxy headers added (RFC 9110 §7.6).
  http::HeaderMap& h = request_.headers;
  prepareUpgrade();  // reads Connection and Upgrade before they go
  http::stripHopByHop(h);
  if (!upgrade_.empty()) {
    // RFC 9110 §7.8: the Upgrade goes on with the "upgrade" connection option naming it.
    h.add("Connection", "upgrade");
    h.add("Upgrade", upgrade_);
  }
  std::string xff;
  for (size_t i = 0; const std::string_view* v = h.get(http::HeaderId::kXForwardedFor, i); ++i) {
    http::forEachListElement(
        *v, [&](std::string_view el) { xff.append(el.data(), el.size()).append(", "); });
  }
  xff.append(conn_.clientIp());
  if (conn_.misdirected(h)) {
    gatewayError(421, "this connection's certificate does not serve the requested host");
    return;
  }
  conn_.applyTlsHeaders(h);
  // Absolute-form target: the Host sent upstream is the target's authority (RFC 9112 §3.2.2).
  std::string authority = internal::absoluteFormAuthority(request_.target);
  if (!authority.empty()) h.set(http::HeaderId::kHost, authority);
  h.set(http::HeaderId::kXForwardedFor, xff);
  h.set(http::HeaderId::kXForwardedProto, conn_.secure() ? "https" : "http");

  // The route is matched before the filters (by path, which they cannot change), so they see
  // its name and cluster, and the route may bring a chain of its own. A request no route
  // matches still runs the listener's chain and is answered 404 after it (an unauthenticated
  // client learns nothing about the routes), through the response filters like any reply.
  if (hasDotSegment(request_.target)) {
    // "/public/../admin" would run the /public route's chain and reach /admin upstream.
    gatewayError(400, "the request path has a '.' or '..' segment");
    return;
  }
  routeRequest();
  const config::Route* route = routed_ ? route_result_.route : nullptr;
  // No filter to run (most listeners): the runner is left without a chain; it passes every
  // event straight on.
  bool foreign = false;
  std::shared_ptr<WorkerFilterChain> chain = chain_->nonEmptyForRoute(route, &foreign);
  if (foreign) {  // never expected (runtime.h): fewer filters than the route has is no option
    gatewayError(500, "the route's filter chain is not known to this worker");
    return;
  }
  if (chain != nullptr) {
    std::string failed;
    if (!fm_.createFilters(std::move(chain), &failed)) {
      gatewayError(500, "filter '" + failed + "' failed to start");
      return;
    }
  }
  fm_.decodeHeaders(request_.framing == http::Framing::kNone);
}

void Stream::routeRequest() {
  route_table_ = runtime_.routeTable();
  routed_ = route(*route_table_->config, chain_->info().config, request_.target, &route_result_,
                  &route_error_);
  if (!routed_) return;
  upstream_path_ = std::move(route_result_.upstream_path);
  if (route_result_.route != nullptr) {
    route_name_ =
        route_result_.route->name.empty() ? route_result_.route->prefix : route_result_.route->name;
  } else {
    // First-segment routing: the segment's prefix, "/" and the segment as in the target.
    route_name_ =
        std::string_view(route_result_.cluster.data() - 1, route_result_.cluster.size() + 1);
  }
}

void Stream::onDecodedHeaders() {
  if (!routed_) {
    info_.setFlag(kNoRoute);
    gatewayError(404, route_error_);
    return;
  }
  cluster_ = runtime_.cluster(route_result_.cluster);
  if (cluster_ == nullptr) {
    info_.setFlag(kNoRoute);
    gatewayError(404, "no cluster '" + std::string(route_result_.cluster) + "' for this path");
    return;
  }
  info_.cluster = cluster_->name();
  if (!request_.headers.has(http::HeaderId::kHost)) {
    request_.headers.add("Host", route_result_.cluster);
  }
  if (!admitRequest(route_result_.route)) return;
  forwardUpstream();
}

void Stream::onRequestBuffering() {
  // The headers wait for the whole body: a client that sent Expect: 100-continue waits for us.
  if (expect_continue_ && !request_complete_ && !sent_continue_) {
    evbuffer_add(conn_.output(), "HTTP/1.1 100 Continue\r\n\r\n", 25);
    sent_continue_ = true;
  }
}

void Stream::forwardUpstream() {
  if (expect_continue_ && !request_complete_ && !sent_continue_) {
    evbuffer_add(conn_.output(), "HTTP/1.1 100 Continue\r\n\r\n", 25);
    sent_continue_ = true;
  }
  // Any body that arrived while filters ran sits in pending_ already; the head goes first.
  if (pending_ == nullptr || evbuffer_get_length(pending_) == 0) {
    // A pooled connection taken at once gets the head written straight into its output
    // (flushPending); otherwise it waits in pending_ as it would have.
    head_due_ = true;
    startAttempt();
    if (head_due_) {
      head_due_ = false;
      if (!finished_) writeUpstreamHead(pendingBuffer());
    }
    return;
  }
  if (replay_ != nullptr) {
    size_t n = evbuffer_get_length(pending_);
    replay_ok_ = n <= cluster_->info().config.retry_policy.max_body_bytes;
    if (replay_ok_) evbuffer_add(replay_, evbuffer_pullup(pending_, -1), n);
  }
  evbuffer* head = evbuffer_new();
  writeUpstreamHead(head);
  evbuffer_prepend_buffer(pending_, head);
  evbuffer_free(head);
  startAttempt();
}

void Stream::onRequestBody(const char* data, size_t len) {
  info_.bytes_in += len;
  if (finished_ || response_complete_) return;  // replying locally: the body is dropped
  fm_.decodeData(data, len, false);
}

void Stream::onDecodedData(const char* data, size_t len, bool end) {
  evbuffer* sink = requestSink();
  if (len > 0) {
    if (request_.framing == http::Framing::kChunked) {
      http::writeChunk(sink, data, len);
    } else {
      evbuffer_add(sink, data, len);
    }
    if (replay_ != nullptr && replay_ok_) {
      // Kept for a resend while it fits (retry_policy.max_body_bytes).
      if (evbuffer_get_length(replay_) + len >
          cluster_->info().config.retry_policy.max_body_bytes) {
        replay_ok_ = false;
        evbuffer_drain(replay_, evbuffer_get_length(replay_));
      } else if (request_.framing == http::Framing::kChunked) {
        http::writeChunk(replay_, data, len);
      } else {
        evbuffer_add(replay_, data, len);
      }
    }
  }
  if (end) {
    request_sent_end_ = true;
    if (request_.framing == http::Framing::kChunked) {
      http::writeLastChunk(sink);
      if (replay_ != nullptr && replay_ok_) http::writeLastChunk(replay_);
    }
    if (upstream_ != nullptr && upstream_->connected() && sent_upstream_) {
      upstream_->setReadTimeout(cluster_->info().config.response_timeout_ms);
    }
    return;
  }
  if (evbuffer_get_length(sink) > kHighWatermark && !request_paused_) {
    request_paused_ = true;
    // An upstream that neither reads the body nor answers for response_timeout_ms is stuck:
    // the read timeout runs while the upload waits on it (kTimeout → 504).
    if (upstream_ != nullptr && sink != pending_) {  // the upstream connection's output
      upstream_->setReadTimeout(cluster_->info().config.response_timeout_ms);
    }
    conn_.pauseReading();
  }
}

void Stream::onRequestComplete() {
  request_complete_ = true;
  if (finished_) return;
  if (!response_complete_) fm_.decodeData("", 0, true);
  if (response_complete_ && !finished_) finish(close_after_);
}

void Stream::finish(bool close) {
  if (finished_) return;
  releaseResilience();  // the upstream side is done either way
  if (conn_.outputLength() > kLowWatermark) {
    // Much of the response is still in our output (handed over whole, or the end of a streamed
    // one): the stream ends when the client has taken it (the output's low-watermark callback,
    // which every write under it calls), so that a client that goes away mid-way is logged as
    // such (client_reset, bytes_out as sent), the duration covers the delivery, and a
    // pipelined request waits. Closing after it: nothing more is read (as closeAfterFlush
    // would), so no late request bytes can cut the response; the output watch ends a client
    // that stops reading.
    if (!flushing_) {
      flushing_ = true;
      conn_.watchOutput();
    }
    flush_close_ = flush_close_ || close;
    if (flush_close_) conn_.pauseReading();
    return;
  }
  finished_ = true;
  const stats::ListenerStats& stats = *chain_->info().stats;
  stats.response(response_.status);
  stats.duration.observeMicros(internal::nowUs() - start_us_);
  callOnLog();
  conn_.onStreamDone(close);  // may deferDelete this stream
}

void Stream::callOnLog() {
  if (logged_) return;
  logged_ = true;
  fm_.log();  // the stream ended: timers cancelled, then every filter's on_log
  ended_ = true;
  if (ref_ != 0) runtime_.streams().remove(ref_);  // posts from now on get NULL

  logAccess();
}

void Stream::logAccess() {
  const ListenerInfo& li = chain_->info();
  if (li.access_logs.empty()) return;
  info_.total_us = internal::nowUs() - info_.start_mono_us;
  info_.status = response_started_ ? response_.status : 0;
  if (const std::string_view* id = request_.headers.get("x-request-id")) info_.request_id = *id;
  writeAccessLog(li, runtime_.worker().index(), info_);
}

void Stream::onRequestError(uint32_t status, const std::string& reason) {
  if (finished_) return;
  info_.setFlag(kBadRequest);
  if (response_started_) {
    info_.setFlag(kResponseTruncated);
    conn_.abort();
    return;
  }
  request_complete_ = true;  // nothing more will be read: the connection closes after the reply
  gatewayError(status, reason);
}

void Stream::onDownstreamReset() {
  if (finished_) return;
  finished_ = true;
  // bytes_out is what reached the client: the body bytes still in our output never did. Of the
  // unsent bytes, those beyond what the response before left are this one's (within that
  // tail, ≤ kLowWatermark; framing bytes among them, hence the clamp).
  const size_t unsent = conn_.outputLength();
  const size_t mine = unsent > output_before_ ? unsent - output_before_ : 0;
  info_.bytes_out -= std::min<uint64_t>(info_.bytes_out, mine);
  if (!info_.hasFlag(kResponseTruncated) && !info_.hasFlag(kDownstreamTimeout)) {
    info_.setFlag(kClientReset);
  }
  if (leaveQueue()) queue_->stats().cancelled.inc();  // never sent upstream
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  dropUpstream();  // closes the upstream connection: the backend stops working for nobody
  releaseResilience();
  callOnLog();
}

}  // namespace sluice::proxy
