// One request/response exchange on a downstream connection: routing, the filter chain, the
// upstream attempt(s) and the response back. Phases, in order (each has a default):
//   request head → request filters → route → pick host → connect/reuse → send head+body
//   → response head → response filters → response body → log.
// Worker thread only. Owned by its DownstreamConnection; deleted through deferDelete.
#pragma once

#include <event2/buffer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/api/filter.h"
#include "core/event/worker.h"
#include "core/http/parser.h"
#include "core/proxy/filter_manager.h"
#include "core/proxy/request_info.h"
#include "core/proxy/router.h"
#include "core/proxy/runtime.h"
#include "core/proxy/tunnel.h"
#include "core/upstream/connection.h"
#include "core/upstream/wait_queue.h"

namespace sluice::proxy {

class DownstreamConnection;

class Stream : public event::Deletable,
               private upstream::UpstreamCallbacks,
               private upstream::WaitTicket::Waiter,
               private FilterManagerCallbacks {
 public:
  Stream(DownstreamConnection& conn, WorkerRuntime& runtime,
         std::shared_ptr<WorkerFilterChain> chain);
  ~Stream() override;
  // From a per-thread free list (stream_alloc.cc): one Stream per request, too large for
  // malloc's per-thread cache.
  static void* operator new(size_t size);
  static void operator delete(void* p, size_t size);

  // --- from the downstream connection ---
  // The request head is complete and valid (takes its content).
  void onRequestHead(http::MessageHead& head);
  void onRequestBody(const char* data, size_t len);
  void onRequestComplete();
  // The downstream output drained below its low watermark.
  void onDownstreamWritable();
  // The request turned out malformed mid-body (bad chunk, body over the limit): answer
  // `status` when no response has started (the connection then closes), else cut it.
  void onRequestError(uint32_t status, const std::string& reason);
  // The client went away or the connection failed: abandon everything, no reply.
  void onDownstreamReset();
  // The connection is closing because the client stalled (idle timeout mid-request): the
  // access log says downstream_timeout rather than client_reset. Call before the reset.
  void markDownstreamTimeout() { info_.setFlag(kDownstreamTimeout); }
  // sluice is cutting the connection itself (drain deadline, shutdown): a response under way is
  // logged response_truncated rather than client_reset. Call before the abort.
  void markCut() {
    if (response_started_) info_.setFlag(kResponseTruncated);
  }
  bool requestComplete() const { return request_complete_; }
  // Waiting in the cluster's queue for a host with room (max_requests_per_host).
  bool waitingInQueue() const { return queue_timer_ != nullptr; }
  // The tunnel this request became (after a 101) ended: completes the access log facts
  // (status 101, bytes each way) and writes the line. The connection closes next.
  void onTunnelEnd(const Tunnel::Result& result);

  // --- for the filter host API (core/proxy/filter_host.cc); worker thread ---
  const http::MessageHead& request() const { return request_; }
  http::HeaderMap& headers(sluice_header_map map);
  const std::string& originalTarget() const { return original_target_; }
  const std::string& clientAddress() const;
  uint32_t responseStatus() const { return response_.status; }
  uint32_t workerIndex() const;
  FilterManager& filters() { return fm_; }
  // send_local_reply_headers: drops (and logs) invalid and framing/hop-by-hop fields.
  void filterLocalReply(uint32_t status, std::string_view content_type, std::string_view body,
                        const sluice_header_field* headers, size_t count);
  // This stream's reference for post(); registered on first use (most requests never need
  // one). 0 once the stream ended.
  sluice_stream_ref ref();
  // A post() for this stream reached its worker (StreamRegistry).
  void runPosted(sluice_post_fn fn, void* arg) { fm_.runPosted(fn, arg); }
  // The request context (limits in core/api/filter.h). -1 when refused.
  int contextSet(std::string_view key, std::string_view value);
  const std::string* contextGet(std::string_view key) const;
  // An attribute's value; empty view with data() == nullptr when absent.
  std::string_view attribute(sluice_attribute attr) const;
  uint64_t startTimeUs(sluice_clock clock) const;
  // set_upstream_path (filter_host.cc): sends the request upstream with `path` (validated by the
  // caller) instead of the routed one. False once the request headers passed the last filter
  // (they may have gone upstream) or the request is being answered locally.
  bool setUpstreamPath(std::string_view path);

 private:
  // FilterManagerCallbacks (stream_filters.cc).
  void onDecodedHeaders() override;  // route and forward
  void onDecodedData(const char* data, size_t len, bool end) override;
  void onEncodedHeaders() override;
  void onEncodedData(const char* data, size_t len, bool end) override;
  void onFilterReply(FilterReply reply, size_t filter, bool filtered) override;
  void onBodyReplaced(FilterDir dir, uint64_t len) override;
  void onRequestBuffering() override;
  void onHolding(FilterDir dir, bool above) override;

  // Request phases.
  void routeRequest();
  void forwardUpstream();
  void startAttempt();
  void flushPending();
  evbuffer* requestSink();
  // pending_, created on first use (most requests go to a pooled connection at once and never
  // need it).
  evbuffer* pendingBuffer() {
    if (pending_ == nullptr) pending_ = evbuffer_new();
    return pending_;
  }
  // The request head goes upstream first: into pending_ (emptied of anything before), then
  // `body` (the replayed body; may be null).
  void restartPending(evbuffer* body);
  // Returns the attempt's latency (pick → now) in µs; 0 when no attempt was active.
  uint64_t endAttempt(sluice_outcome outcome);
  void dropUpstream();
  // Per-host limit and wait queue (stream_queue.cc). pickHost() picks a host with room and
  // reserves its slot (index), or makes the request wait (kWaiting: queued, or answered 503
  // when the queue is full), or finds no host at all (-1).
  static constexpr int64_t kWaiting = -2;
  int64_t pickHost(const sluice_pick_context& ctx);
  void waitInQueue(bool at_head);
  void onQueueTurn(bool closed) override;
  static void onQueueTimer(evutil_socket_t, short, void* arg);
  // Out of the queue, timer off (idempotent). True when the request was waiting.
  bool leaveQueue();
  void queueReply(std::string_view detail);
  bool staleConnection(upstream::UpstreamError error) const;
  // Resilience (stream_retry.cc): admission, retries with backoff and budget, circuit
  // breakers, the whole-request timeout and the deadline header.
  // Routing done: reads the retry policy and timeout (route overrides), applies a trusted
  // incoming deadline, counts the request in the cluster (max_requests) and arms the request
  // timer. False when it answered (503 overflow, 504 deadline already passed).
  bool admitRequest(const config::Route* route);
  // Before a new upstream connection: the max_connections / max_pending_requests breakers.
  // False when it answered 503.
  bool admitConnection();
  // The retry condition (stats::ClusterStats::RetryReason) an upstream error meets, or -1.
  int retryReasonFor(upstream::UpstreamError error, bool sent) const;
  // Takes a retry when retries are left, the budget and max_retries allow it: schedules the
  // next attempt after a backoff. `sent`: the failed try sent request bytes (only such retries
  // need the budget; one that reached no upstream adds no load). False (and the flags/counters
  // say why) otherwise.
  bool tryRetry(int reason, bool sent);
  // A 502/503/504 head listed in retry_on for a request that may go again: true when a retry
  // was taken (the response is to be discarded).
  bool retryOnStatus(uint32_t status);
  static void onBackoffTimer(evutil_socket_t, short, void* arg);
  static void onRequestTimer(evutil_socket_t, short, void* arg);
  void onRequestTimeout();
  bool idempotent() const;
  // The whole request as received so far can be sent again (no body, or all of it in replay_).
  bool bodyHeld() const {
    return replay_ok_ && (request_.framing == http::Framing::kNone || replay_ != nullptr);
  }
  // Writes the request head (with the deadline header) into `out`.
  void writeUpstreamHead(evbuffer* out);
  // Ends all cluster accounting and timers (finish, reset, destruction). Idempotent.
  void releaseResilience();
  void releasePending();
  void releaseRetry();
  // Upgrades (stream_upgrade.cc): what the request offers that the listener allows, and the
  // 101 answer.
  void prepareUpgrade();
  int onSwitchingProtocols(http::MessageHead& head);
  void writeSwitchingHead();  // the 101 passed the response filters
  // Response phases.
  void writeResponseHead();
  void sendLocalReply(uint32_t status, std::string_view content_type, std::string body, bool close);
  // A local reply: `filtered` passes the response header hooks first (request-phase replies);
  // otherwise it replaces the response as it is.
  void sendReply(FilterReply reply, bool close, bool filtered);
  void writeLocalReply();
  // Whether a filter's local reply must close the connection (request not read completely).
  bool replyMustClose() const;
  void gatewayError(uint32_t status, std::string_view detail);
  void finish(bool close);
  void callOnLog();
  // Completes info_ and writes the access log line (once, from callOnLog).
  void logAccess();

  // UpstreamCallbacks.
  void onUpstreamConnected() override;
  int onUpstreamHead(http::MessageHead& head) override;
  void onUpstreamBody(const char* data, size_t len) override;
  void onUpstreamComplete() override;
  void onUpstreamWritable() override;
  void onUpstreamSwitched() override;
  void onUpstreamError(upstream::UpstreamError error, const std::string& detail) override;

  sluice_stream* handle() { return reinterpret_cast<sluice_stream*>(this); }

  DownstreamConnection& conn_;
  WorkerRuntime& runtime_;
  std::shared_ptr<WorkerFilterChain> chain_;  // the listener's chain (its info(), stats, logs)
  FilterManager fm_;                          // runs the request's chain (chain_->forRoute())
  sluice_stream_ref ref_ = 0;                 // in runtime_.streams() while registered
  bool ended_ = false;                        // on_log ran: no new reference
  RequestContext context_;                    // the request context

  // Routing, done before the filters run (by path, which filters cannot change).
  std::shared_ptr<const RouteTable> route_table_;  // keeps route_result_.route valid
  bool routed_ = false;
  RouteResult route_result_;
  std::string route_error_;  // why no route matched (404 after the request filters)
  // The route's name, its prefix, or "/<cluster>" (segment routing): points into the route
  // table's config or into request_.target.
  std::string_view route_name_;

  http::MessageHead request_;
  std::string original_target_;
  std::string upstream_path_;
  std::shared_ptr<upstream::WorkerCluster> cluster_;
  bool expect_continue_ = false;
  bool head_request_ = false;
  // Protocols offered in Upgrade that the listener allows ("websocket"); empty: not an upgrade
  // request (any Upgrade it had is stripped like every hop-by-hop field).
  std::string upgrade_;
  bool switching_ = false;  // the upstream's 101 went downstream; the tunnel starts next
  uint64_t start_us_ = 0;   // when the request head arrived (monotonic µs)

  // Upstream attempt.
  std::unique_ptr<upstream::UpstreamConnection> upstream_;
  std::shared_ptr<upstream::Host> host_;
  uint32_t host_index_ = 0;
  uint64_t host_set_version_ = 0;
  bool attempt_active_ = false;
  uint64_t attempt_start_us_ = 0;
  absl::InlinedVector<uint32_t, 4> tried_;  // hosts tried (no allocation for the first four)
  uint32_t retries_left_ = 0;
  bool stale_retried_ = false;
  // Resilience state (stream_retry.cc).
  uint32_t retry_on_ = 0;            // config::RetryOn bits (route override or the cluster's)
  uint64_t deadline_us_ = 0;         // monotonic µs after which the request is 504; 0 = none
  bool counted_request_ = false;     // counted in the cluster's active_requests
  bool holds_retry_ = false;         // counted in the cluster's active_retries
  bool pending_counted_ = false;     // counted in the cluster's pending_requests
  evbuffer* replay_ = nullptr;       // the request body as framed upstream, kept for a resend
  bool replay_ok_ = true;            // replay_ holds the whole body received so far
  bool downstream_interim_ = false;  // a 1xx response went to the client
  uint32_t retry_status_ = 0;        // the 5xx a retry discarded; answered if later tries fail
  ::event* backoff_timer_ = nullptr;
  ::event* request_timer_ = nullptr;
  evbuffer* pending_ = nullptr;    // request bytes waiting for a connected upstream (or null)
  bool head_due_ = false;          // forwardUpstream: flushPending writes the head itself
  bool sent_upstream_ = false;     // some request bytes went to an upstream connection
  bool request_paused_ = false;    // downstream reading paused for backpressure
  bool hold_request_ = false;      // downstream reading paused: a paused filter holds the body
  bool request_sent_end_ = false;  // the whole request (as filtered) went to the sink
  // Waiting for a host with room (max_requests_per_host); see stream_queue.cc.
  std::shared_ptr<upstream::WaitQueue> queue_;          // the queue the ticket is in
  std::shared_ptr<upstream::WaitTicket> queue_ticket_;  // set while queued or a turn is due
  ::event* queue_timer_ = nullptr;  // armed for queue_timeout_ms while the request waits
  bool queue_turn_ = false;         // inside onQueueTurn: a woken request keeps its place

  // Response.
  http::MessageHead response_;
  uint32_t last_upstream_status_ = 0;
  bool response_started_ = false;  // head written downstream
  bool response_complete_ = false;
  bool rechunk_ = false;          // upstream body re-framed as chunked downstream
  bool response_paused_ = false;  // upstream reading paused for backpressure
  bool hold_response_ = false;    // upstream reading paused: a paused filter holds the body
  bool upgrade_head_ = false;     // the 101 is in the response filters
  bool close_after_ = false;
  bool sent_continue_ = false;
  uint32_t retry_after_s_ = 0;  // a local reply carries Retry-After (seconds) when > 0

  bool request_complete_ = false;
  bool finished_ = false;
  bool logged_ = false;
  // The response is complete but more than kLowWatermark of it is still unsent (handed over
  // whole: a filter buffered the body, or a large local reply): finish() waits until the client
  // has taken it (onDownstreamWritable) or goes away (onDownstreamReset).
  bool flushing_ = false;
  bool flush_close_ = false;  // finish()'s `close` while flushing_
  // The connection's unsent bytes when this stream's response head was written: the end of the
  // response before it (a reset subtracts only what is unsent beyond it from bytes_out).
  size_t output_before_ = 0;
  // The local reply in the response filters (written when its headers passed them).
  bool local_reply_ = false;
  bool local_close_ = false;
  std::string local_body_;

  // What the access log reports, filled as the request goes (request_info.h).
  RequestInfo info_;
};

// The filter host API table (sluice_filter_host_api) backed by Stream.
const sluice_filter_host_api* filterHostApi();

}  // namespace sluice::proxy
