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

#include "core/api/filter.h"
#include "core/event/worker.h"
#include "core/http/parser.h"
#include "core/proxy/request_info.h"
#include "core/proxy/runtime.h"
#include "core/proxy/tunnel.h"
#include "core/upstream/connection.h"
#include "core/upstream/wait_queue.h"

namespace sluice::proxy {

class DownstreamConnection;

class Stream : public event::Deletable,
               private upstream::UpstreamCallbacks,
               private upstream::WaitTicket::Waiter {
 public:
  Stream(DownstreamConnection& conn, WorkerRuntime& runtime,
         std::shared_ptr<WorkerFilterChain> chain);
  ~Stream() override;

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
  bool requestComplete() const { return request_complete_; }
  // Waiting in the cluster's queue for a host with room (max_requests_per_host).
  bool waitingInQueue() const { return queue_timer_ != nullptr; }
  // The tunnel this request became (after a 101) ended: completes the access log facts
  // (status 101, bytes each way) and writes the line. The connection closes next.
  void onTunnelEnd(const Tunnel::Result& result);

  // --- for the filter host API (core/proxy/filter_host.cc) ---
  const http::MessageHead& request() const { return request_; }
  http::HeaderMap& headers(sluice_header_map map);
  const std::string& originalTarget() const { return original_target_; }
  const std::string& clientAddress() const;
  uint32_t responseStatus() const { return response_.status; }
  uint32_t workerIndex() const;
  void filterLocalReply(uint32_t status, std::string_view content_type, std::string_view body);
  void filterResume();

 private:
  // Request phases.
  void runRequestFilters(size_t from);
  void routeAndForward();
  void forwardUpstream();
  void startAttempt();
  void flushPending();
  evbuffer* requestSink();
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
  // Response phases.
  void writeResponseHead();
  bool runResponseHeaderFilters();
  void sendLocalReply(uint32_t status, std::string_view content_type, std::string body, bool close);
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
  std::shared_ptr<WorkerFilterChain> chain_;
  std::vector<void*> filter_self_;  // per-filter `self` (stream state or worker instance)
  size_t filters_created_ = 0;
  size_t paused_at_ = SIZE_MAX;
  int hook_depth_ = 0;  // > 0 while a filter hook runs

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
  std::vector<uint32_t> tried_;
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
  evbuffer* pending_ = nullptr;  // request bytes waiting for a connected upstream
  bool sent_upstream_ = false;   // some request bytes went to an upstream connection
  bool request_paused_ = false;  // downstream reading paused for backpressure
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
  bool close_after_ = false;
  bool sent_continue_ = false;
  uint32_t retry_after_s_ = 0;  // a local reply carries Retry-After (seconds) when > 0

  bool request_complete_ = false;
  bool finished_ = false;
  bool logged_ = false;
  // A filter's local reply waiting to be sent when its hook returns.
  bool filter_reply_pending_ = false;
  uint32_t filter_reply_status_ = 0;
  std::string filter_reply_type_;
  std::string filter_reply_body_;

  // What the access log reports, filled as the request goes (request_info.h).
  RequestInfo info_;
};

// The filter host API table (sluice_filter_host_api) backed by Stream.
const sluice_filter_host_api* filterHostApi();

}  // namespace sluice::proxy
