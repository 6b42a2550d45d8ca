#include "core/proxy/stream.h"

#include <time.h>

#include "core/common/log.h"
#include "core/http/serialize.h"
#include "core/proxy/downstream.h"
#include "core/proxy/hash_key.h"
#include "core/proxy/local_reply.h"
#include "core/proxy/router.h"

namespace sluice::proxy {
namespace {

// Backpressure: stop reading a side when the other side's unsent bytes pass kHighWatermark;
// resume when they fall under kLowWatermark (the write callbacks' watermark).
constexpr size_t kHighWatermark = 256 * 1024;
constexpr size_t kLowWatermark = 64 * 1024;

// "host:port" of an absolute-form target ("http://host:port/path"), or "".
std::string absoluteFormAuthority(const std::string& target) {
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

uint64_t nowUs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
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

// The Content-Length value of a bodiless response (HEAD, 304) to pass on unchanged.
bool declaredLength(const http::HeaderMap& h, uint64_t* out) {
  const std::string* v = h.get("content-length");
  if (v == nullptr || v->empty() || v->size() > 19) return false;
  uint64_t n = 0;
  for (char c : *v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = n;
  return true;
}

}  // namespace

Stream::Stream(DownstreamConnection& conn, WorkerRuntime& runtime,
               std::shared_ptr<WorkerFilterChain> chain)
    : conn_(conn), runtime_(runtime), chain_(std::move(chain)), pending_(evbuffer_new()) {}

Stream::~Stream() {
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  dropUpstream();
  callOnLog();
  for (size_t i = 0; i < filters_created_; ++i) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.stream_create != nullptr && hooks.stream_destroy != nullptr &&
        filter_self_[i] != nullptr) {
      hooks.stream_destroy(filter_self_[i]);
    }
  }
  evbuffer_free(pending_);
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
  std::swap(request_, head);
  original_target_ = request_.target;
  head_request_ = request_.method == "HEAD";
  auto& stats = runtime_.worker().stats();
  event::WorkerStats::inc(stats.downstream_rq_total);

  if (request_.method == "CONNECT") {
    gatewayError(501, "CONNECT is not supported");
    return;
  }
  if (const std::string* expect = request_.headers.get("expect")) {
    if (!http::equalsIgnoreCase(*expect, "100-continue") || request_.headers.count("expect") > 1) {
      gatewayError(417, "only Expect: 100-continue is supported");
      return;
    }
    // We answer 100 Continue ourselves once the request is routed (RFC 9110 §10.1.1).
    expect_continue_ = request_.version_minor == 1 && request_.framing != http::Framing::kNone;
    request_.headers.remove("expect");
  }

  // Headers as they will go upstream: hop-by-hop gone, proxy headers added (RFC 9110 §7.6).
  http::HeaderMap& h = request_.headers;
  http::stripHopByHop(h);
  std::string xff;
  for (size_t i = 0; const std::string* v = h.get("x-forwarded-for", i); ++i) {
    http::forEachListElement(*v, [&](std::string_view el) {
      xff.append(el.data(), el.size()).append(", ");
    });
  }
  xff.append(conn_.clientIp());
  // Absolute-form target: the Host sent upstream is the target's authority (RFC 9112 §3.2.2).
  std::string authority = absoluteFormAuthority(request_.target);
  if (!authority.empty()) h.set("Host", authority);
  h.set("X-Forwarded-For", xff);
  h.set("X-Forwarded-Proto", "http");

  // Filters: one `self` per filter, made now so every hook (and on_log) has it.
  size_t n = chain_->size();
  filter_self_.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.stream_create != nullptr) {
      filter_self_[i] = hooks.stream_create(chain_->worker(i), handle());
      if (filter_self_[i] == nullptr) {
        filters_created_ = i;
        gatewayError(500, "filter '" + chain_->name(i) + "' failed to start");
        return;
      }
    } else {
      filter_self_[i] = chain_->worker(i);
      if (filter_self_[i] == nullptr) {
        filters_created_ = i;
        gatewayError(500, "filter '" + chain_->name(i) + "' has no worker instance");
        return;
      }
    }
    filters_created_ = i + 1;
  }
  runRequestFilters(0);
}

void Stream::runRequestFilters(size_t from) {
  const bool end_stream = request_.framing == http::Framing::kNone;
  for (size_t i = from; i < chain_->size(); ++i) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.on_request_headers == nullptr) continue;
    ++hook_depth_;
    sluice_filter_status st =
        hooks.on_request_headers(filter_self_[i], handle(), end_stream ? 1 : 0);
    --hook_depth_;
    if (finished_) return;
    if (st == SLUICE_FILTER_STOP || filter_reply_pending_) {
      if (filter_reply_pending_) {
        filter_reply_pending_ = false;
        sendLocalReply(filter_reply_status_, filter_reply_type_, std::move(filter_reply_body_),
                       !request_complete_ && request_.framing != http::Framing::kNone);
      } else {
        gatewayError(500, "filter '" + chain_->name(i) + "' stopped without a reply");
      }
      return;
    }
    if (st == SLUICE_FILTER_PAUSE) {
      paused_at_ = i;
      return;
    }
  }
  paused_at_ = SIZE_MAX;
  routeAndForward();
}

void Stream::routeAndForward() {
  // Routing comes after the request filters (as Envoy's router is the last filter): an
  // unauthenticated or rate-limited client learns nothing about which clusters exist, and
  // routing errors pass the response filters like any reply (request ids, added headers).
  const ListenerInfo& li = chain_->info();
  RouteResult route_result;
  std::string why;
  if (!route(runtime_.routes(), li.config, request_.target, &route_result, &why)) {
    gatewayError(404, why);
    return;
  }
  cluster_ = runtime_.cluster(route_result.cluster);
  if (cluster_ == nullptr) {
    gatewayError(404, "no cluster '" + route_result.cluster + "' for this path");
    return;
  }
  upstream_path_ = std::move(route_result.upstream_path);
  retries_left_ = cluster_->info().config.retries;
  if (!request_.headers.has("host")) request_.headers.add("Host", route_result.cluster);
  forwardUpstream();
}

void Stream::filterResume() {
  if (paused_at_ == SIZE_MAX || finished_) return;
  size_t next = paused_at_ + 1;
  paused_at_ = SIZE_MAX;
  runRequestFilters(next);
}

void Stream::filterLocalReply(uint32_t status, std::string_view content_type,
                              std::string_view body) {
  if (finished_ || response_started_) return;
  if (status < 200 || status > 599) status = 500;
  if (hook_depth_ > 0) {
    // Inside a hook: sent when the hook returns.
    filter_reply_pending_ = true;
    filter_reply_status_ = status;
    filter_reply_type_ = std::string(content_type);
    filter_reply_body_ = std::string(body);
    return;
  }
  // Outside any hook (a paused filter answering later): the reply replaces resume().
  paused_at_ = SIZE_MAX;
  sendLocalReply(status, content_type, std::string(body),
                 !request_complete_ && request_.framing != http::Framing::kNone);
}

void Stream::forwardUpstream() {
  if (expect_continue_ && !request_complete_) {
    evbuffer_add(conn_.output(), "HTTP/1.1 100 Continue\r\n\r\n", 25);
    sent_continue_ = true;
  }
  // Any body that arrived while filters ran sits in pending_ already; the head goes first.
  if (evbuffer_get_length(pending_) == 0) {
    http::writeRequestHead(pending_, request_.method, upstream_path_, request_.headers,
                           request_.framing, request_.content_length);
  } else {
    evbuffer* head = evbuffer_new();
    http::writeRequestHead(head, request_.method, upstream_path_, request_.headers,
                           request_.framing, request_.content_length);
    evbuffer_prepend_buffer(pending_, head);
    evbuffer_free(head);
  }
  startAttempt();
}

void Stream::startAttempt() {
  if (finished_) return;
  std::string key = hashKey(cluster_->info().config.hash_key, request_, conn_.clientIp());
  sluice_pick_context ctx{};
  ctx.struct_size = sizeof(ctx);
  ctx.hash_key = sluice_str{key.data(), key.size()};
  ctx.tried = tried_.data();
  ctx.tried_count = tried_.size();
  int64_t index = cluster_->pick(ctx);
  if (index < 0) {
    gatewayError(503, "no healthy upstream host in cluster '" + cluster_->name() + "'");
    return;
  }
  const auto& hosts = cluster_->hosts();
  host_index_ = static_cast<uint32_t>(index);
  host_set_version_ = hosts->version();
  host_ = hosts->at(host_index_).host;
  tried_.push_back(host_index_);
  host_->activeRequests().fetch_add(1, std::memory_order_relaxed);
  host_->totalRequests().fetch_add(1, std::memory_order_relaxed);
  attempt_active_ = true;
  attempt_start_us_ = nowUs();

  const config::Cluster& cc = cluster_->info().config;
  upstream_ = runtime_.pool().acquire(host_.get());
  if (upstream_ != nullptr) {
    upstream_->attach(this, head_request_);
    flushPending();
  } else {
    upstream_ = upstream::UpstreamConnection::connect(runtime_.worker(), host_,
                                                      cc.connect_timeout_ms);
    upstream_->attach(this, head_request_);
  }
}

evbuffer* Stream::requestSink() {
  return (upstream_ != nullptr && upstream_->connected() && sent_upstream_) ? upstream_->output()
                                                                           : pending_;
}

void Stream::flushPending() {
  if (upstream_ == nullptr || !upstream_->connected()) return;
  sent_upstream_ = true;
  evbuffer_add_buffer(upstream_->output(), pending_);
  if (request_complete_) upstream_->setReadTimeout(cluster_->info().config.response_timeout_ms);
}

void Stream::onRequestBody(const char* data, size_t len) {
  if (finished_ || response_complete_) return;  // replying locally: the body is dropped
  for (size_t i = 0; i < filters_created_; ++i) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.on_request_body == nullptr) continue;
    ++hook_depth_;
    sluice_filter_status st = hooks.on_request_body(filter_self_[i], handle(), data, len, 0);
    --hook_depth_;
    if (st == SLUICE_FILTER_STOP || filter_reply_pending_) {
      if (filter_reply_pending_) {
        filter_reply_pending_ = false;
        sendLocalReply(filter_reply_status_, filter_reply_type_, std::move(filter_reply_body_),
                       true);
      } else {
        gatewayError(500, "filter '" + chain_->name(i) + "' stopped the request body");
      }
      return;
    }
  }
  evbuffer* sink = requestSink();
  if (request_.framing == http::Framing::kChunked) {
    http::writeChunk(sink, data, len);
  } else {
    evbuffer_add(sink, data, len);
  }
  if (evbuffer_get_length(sink) > kHighWatermark && !request_paused_) {
    request_paused_ = true;
    conn_.pauseReading();
  }
}

void Stream::onRequestComplete() {
  request_complete_ = true;
  if (finished_) return;
  if (request_.framing != http::Framing::kNone && !response_complete_) {
    for (size_t i = 0; i < filters_created_; ++i) {
      const auto& hooks = chain_->hooks(i);
      if (hooks.on_request_body != nullptr) {
        hooks.on_request_body(filter_self_[i], handle(), "", 0, 1);
      }
    }
  }
  if (request_.framing == http::Framing::kChunked && !response_complete_) {
    http::writeLastChunk(requestSink());
  }
  if (upstream_ != nullptr && upstream_->connected() && sent_upstream_) {
    upstream_->setReadTimeout(cluster_->info().config.response_timeout_ms);
  }
  if (response_complete_) finish(close_after_);
}

void Stream::onUpstreamConnected() { flushPending(); }

void Stream::onUpstreamWritable() {
  if (request_paused_ && upstream_ != nullptr &&
      evbuffer_get_length(upstream_->output()) <= kLowWatermark) {
    request_paused_ = false;
    conn_.resumeReading();
  }
}

void Stream::endAttempt(sluice_outcome outcome) {
  if (!attempt_active_) return;
  attempt_active_ = false;
  host_->activeRequests().fetch_sub(1, std::memory_order_relaxed);
  if (cluster_ != nullptr && cluster_->hosts()->version() == host_set_version_) {
    cluster_->onResult(host_index_, outcome, nowUs() - attempt_start_us_);
  }
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

bool Stream::retryable(upstream::UpstreamError error) const {
  if (retries_left_ == 0 || response_started_) return false;
  bool connect_error = error == upstream::UpstreamError::kConnectFailed ||
                       error == upstream::UpstreamError::kConnectTimeout;
  return connect_error && !sent_upstream_;  // nothing left for this host
}

void Stream::onUpstreamError(upstream::UpstreamError error, const std::string& detail) {
  if (finished_) {
    dropUpstream();
    return;
  }
  auto& stats = runtime_.worker().stats();
  bool stale = staleConnection(error);
  bool retry = stale || retryable(error);
  SLUICE_LOG(kDebug, "upstream ", host_ != nullptr ? host_->address() : "?", " in cluster ",
             cluster_->name(), ": ", detail, retry ? " (retrying)" : "");
  endAttempt(outcomeFor(error));
  if (error == upstream::UpstreamError::kConnectFailed ||
      error == upstream::UpstreamError::kConnectTimeout) {
    event::WorkerStats::inc(stats.upstream_cx_connect_fail);
  } else if (error == upstream::UpstreamError::kTimeout) {
    event::WorkerStats::inc(stats.upstream_rq_timeout);
  } else {
    event::WorkerStats::inc(stats.upstream_rq_reset);
  }
  bool resend_head = sent_upstream_;
  dropUpstream();
  if (retry) {
    if (stale) {
      stale_retried_ = true;
      tried_.pop_back();  // the host is fine; only the connection was stale
    } else {
      --retries_left_;
    }
    event::WorkerStats::inc(stats.upstream_rq_retry);
    if (resend_head) {
      evbuffer_drain(pending_, evbuffer_get_length(pending_));
      http::writeRequestHead(pending_, request_.method, upstream_path_, request_.headers,
                             request_.framing, request_.content_length);
    }
    sent_upstream_ = false;
    startAttempt();
    return;
  }
  if (response_started_) {
    // Bytes already went downstream: all we can do is cut the connection.
    conn_.abort();
    return;
  }
  bool timeout = error == upstream::UpstreamError::kTimeout ||
                 error == upstream::UpstreamError::kConnectTimeout;
  gatewayError(timeout ? 504 : 502,
               "upstream " + host_->address() + " in cluster '" + cluster_->name() + "': " + detail);
}

// ---------------------------------------------------------------- response path

int Stream::onUpstreamHead(http::MessageHead& head) {
  last_upstream_status_ = head.status;
  if (head.status < 200) {
    // Interim responses go to HTTP/1.1 clients (RFC 9110 §15.2), except a 100 after our own.
    if (request_.version_minor == 1 && !(head.status == 100 && sent_continue_) &&
        !response_started_) {
      http::stripHopByHop(head.headers);
      http::writeResponseHead(conn_.output(), head.status, head.reason, head.headers,
                              http::Framing::kNone, 0, false, false);
    }
    return 0;
  }
  endAttempt(head.status >= 500 ? SLUICE_OUTCOME_HTTP_5XX : SLUICE_OUTCOME_SUCCESS);
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
      dropUpstream();
      sendLocalReply(filter_reply_status_, filter_reply_type_, std::move(filter_reply_body_),
                     true);
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
      conn_.abort();
      return;
    }
  }
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
    if (request_complete_ && upstream_->reusable()) {
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
    SLUICE_LOG(kWarn, request_.method, " ", original_target_, " from ", conn_.clientAddress(),
               ": ", status, " ", detail);
  }
  sendLocalReply(status, "application/json", errorBody(status, detail), true);
}

void Stream::sendLocalReply(uint32_t status, std::string_view content_type, std::string body,
                            bool close) {
  if (finished_) return;
  if (response_started_) {
    conn_.abort();
    return;
  }
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  dropUpstream();
  response_.clear();
  response_.status = status;
  if (!content_type.empty()) response_.headers.add("Content-Type", content_type);
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
  if (!no_body) evbuffer_add(conn_.output(), body.data(), body.size());
  response_complete_ = true;
  close_after_ = close;
  if (request_complete_ || close) finish(close);
}

void Stream::finish(bool close) {
  if (finished_) return;
  finished_ = true;
  auto& stats = runtime_.worker().stats();
  uint32_t st = response_.status;
  if (st >= 500) {
    event::WorkerStats::inc(stats.downstream_rq_5xx);
  } else if (st >= 400) {
    event::WorkerStats::inc(stats.downstream_rq_4xx);
  } else if (st >= 300) {
    event::WorkerStats::inc(stats.downstream_rq_3xx);
  } else if (st >= 200) {
    event::WorkerStats::inc(stats.downstream_rq_2xx);
  }
  callOnLog();
  conn_.onStreamDone(close);  // may deferDelete this stream
}

void Stream::callOnLog() {
  if (logged_) return;
  logged_ = true;
  for (size_t i = 0; i < filters_created_; ++i) {
    const auto& hooks = chain_->hooks(i);
    if (hooks.on_log != nullptr) hooks.on_log(filter_self_[i], handle());
  }
}

void Stream::onRequestError(uint32_t status, const std::string& reason) {
  if (finished_) return;
  if (response_started_) {
    conn_.abort();
    return;
  }
  request_complete_ = true;  // nothing more will be read: the connection closes after the reply
  gatewayError(status, reason);
}

void Stream::onDownstreamReset() {
  if (finished_) return;
  finished_ = true;
  if (attempt_active_) endAttempt(SLUICE_OUTCOME_CANCELLED);
  dropUpstream();
  callOnLog();
}

}  // namespace sluice::proxy
