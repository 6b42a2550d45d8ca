// One HTTP/1.1 connection to an upstream host: connects, carries one request/response exchange
// at a time for the stream attached to it, parses responses strictly (DESIGN.md §6: malformed
// or ambiguous responses are errors, and such a connection is never reused), and sits idle in a
// ConnPool between exchanges. Worker thread only.
#pragma once

#include <event2/buffer.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/event/transport.h"
#include "core/event/worker.h"
#include "core/http/parser.h"
#include "core/tls/client_context.h"
#include "core/upstream/cluster_state.h"
#include "core/upstream/host.h"

namespace sluice::upstream {

// Why an upstream exchange failed.
enum class UpstreamError {
  kConnectFailed,   // refused / unreachable
  kConnectTimeout,  // connect_timeout_ms passed
  kTimeout,         // response_timeout_ms passed without upstream bytes
  kReset,           // the connection closed or failed mid-exchange
  kBadResponse,     // the response broke the HTTP rules
};

// The stream using a connection.
class UpstreamCallbacks {
 public:
  virtual ~UpstreamCallbacks() = default;
  // The TCP connection is up (not called for a reused connection).
  virtual void onUpstreamConnected() = 0;
  // Response head (1xx heads included). Return 1 when the response has no body (HEAD), else 0.
  virtual int onUpstreamHead(http::MessageHead& head) = 0;
  virtual void onUpstreamBody(const char* data, size_t len) = 0;
  // The response (or an interim 1xx response) ended.
  virtual void onUpstreamComplete() = 0;
  // The 101 Switching Protocols head (already passed to onUpstreamHead) ended: the connection
  // no longer speaks HTTP. Its transport can be taken with releaseTransport(); bytes after the
  // 101 head wait in its input buffer. Not called from inside the parser.
  virtual void onUpstreamSwitched() = 0;
  // The output buffer drained below the low watermark.
  virtual void onUpstreamWritable() = 0;
  // The exchange failed; the connection is dead and must be released with closeAndDelete.
  virtual void onUpstreamError(UpstreamError error, const std::string& detail) = 0;
};

class ConnPool;

class UpstreamConnection : public event::Deletable, private http::ParserCallbacks {
 public:
  // Starts a non-blocking connect (and, with `tls`, the TLS handshake, offering a session from
  // `sessions`), all within `connect_timeout_ms`. Never null; failures (including a TLS
  // verification failure) arrive as onUpstreamError kConnectFailed/kConnectTimeout after
  // attach().
  static std::unique_ptr<UpstreamConnection> connect(
      event::Worker& worker, std::shared_ptr<Host> host, uint32_t connect_timeout_ms,
      const tls::ClientContext* tls = nullptr,
      std::shared_ptr<tls::SessionCache> sessions = nullptr,
      const http::ParserLimits* limits = nullptr);
  // Limits for parsing upstream responses: a header section of at most `max_header_bytes`
  // (names and values) and `max_header_count` fields; no body limit. connect() without
  // `limits` uses responseLimits(65536, 100).
  static http::ParserLimits responseLimits(uint32_t max_header_bytes, uint32_t max_header_count);
  // Counts this connection in state->connections until it is destroyed (circuit breakers).
  void countIn(std::shared_ptr<ClusterState> state);
  // The exchange failed (kBadResponse) because the response head was over the limits.
  bool headerLimitExceeded() const { return parser_.headerLimitExceeded(); }
  ~UpstreamConnection() override;

  // Gives the connection to a stream for one exchange. `head_request` tells the parser that
  // the response has no body (RFC 9110 §9.3.2). `upgrade`: the request asked to switch
  // protocols (RFC 9110 §7.8), so a 101 answer is accepted (else it is a bad response, 502).
  void attach(UpstreamCallbacks* callbacks, bool head_request, bool upgrade = false);
  // Ends the exchange (the stream is done with it).
  void detach();
  // Sets the read inactivity timeout (0 = none), e.g. response_timeout_ms once sent.
  void setReadTimeout(uint32_t ms);
  // Stops/starts reading (backpressure toward a slow downstream).
  void pauseReading();
  void resumeReading();

  // After onUpstreamSwitched: takes the transport (for a tunnel); the connection is dead from
  // then on (delete it). Null if it was already taken.
  std::unique_ptr<event::Transport> releaseTransport();
  // True once the upstream closed its side (EOF seen), e.g. right after a 101 head.
  bool inputEnded() const { return input_ended_; }

  // From inside UpstreamCallbacks::onUpstreamBody only, with the piece it was given: appends
  // that piece to `dst` by moving the input buffer's chain that holds it instead of copying its
  // bytes, when the piece is at least kMoveBodyMin bytes and runs to the end of the chain being
  // parsed (a Content-Length body read in large reads: all of it but a small tail). Returns
  // false and does nothing otherwise (another piece, a small one, or one followed by more
  // bytes in the same chain): the caller copies it. The moved chain keeps the bytes the parser
  // is still looking at; `dst` must not be written to the socket or freed before the callback
  // returns (transport outputs are flushed when the transport callback returns).
  bool moveBody(evbuffer* dst, const char* data, size_t len);
  static constexpr size_t kMoveBodyMin = 2048;

  // The request bytes' buffer: appending to it schedules their write (Transport::output()).
  evbuffer* output() const { return transport_->output(); }
  size_t outputLength() const { return transport_->outputLength(); }  // unsent bytes
  bool connected() const { return connected_; }
  bool reused() const { return exchanges_ > 1; }
  // True while the connection may carry another exchange: connected, no error, the last
  // response was complete and allowed keep-alive.
  bool reusable() const { return connected_ && !failed_ && !parser_.inMessage() && keep_alive_; }
  const std::shared_ptr<Host>& host() const { return host_; }
  event::Worker& worker() const { return worker_; }

  // False when the peer has closed (or sent unexpected bytes on) an idle connection; one
  // non-blocking peek at the socket.
  bool stillOpen() const;
  // Idle-in-pool state (ConnPool only).
  void setIdle(ConnPool* pool, uint32_t idle_timeout_ms);

 private:
  UpstreamConnection(event::Worker& worker, std::shared_ptr<Host> host,
                     const http::ParserLimits& limits);
  static void onRead(void* arg);
  static void onDrained(void* arg);
  static void onEvent(void* arg, short what);
  void fail(UpstreamError error, const std::string& detail);
  uint64_t lastActivity() const;  // the loop's cached wall clock, ms
  void parseInput();

  int onHead(http::MessageHead& head) override;
  void onBody(const char* data, size_t len) override;
  bool onMessageComplete() override;

  event::Worker& worker_;
  std::shared_ptr<Host> host_;
  std::unique_ptr<event::Transport> transport_;
  http::Parser parser_;
  UpstreamCallbacks* callbacks_ = nullptr;
  ConnPool* idle_pool_ = nullptr;
  bool connected_ = false;
  bool failed_ = false;
  bool keep_alive_ = true;
  bool head_request_ = false;
  bool upgrade_ = false;      // this exchange's request asked for an upgrade
  bool switching_ = false;    // a 101 head arrived; its end switches protocols
  bool switched_ = false;     // the 101 ended: bytes from here on are not HTTP
  bool input_ended_ = false;  // EOF seen
  uint64_t exchanges_ = 0;
  uint32_t read_timeout_ms_ = 0;              // the read timeout in force (0: none)
  uint64_t idle_since_ = 0;                   // ms (lastActivity()) when it went idle in the pool
  std::shared_ptr<ClusterState> counted_in_;  // see countIn()
  // The input chain parseInput is feeding the parser (moveBody): its end, and how many of its
  // bytes were already drained by moves. parse_end_ is null outside parser_.execute().
  const char* parse_begin_ = nullptr;
  const char* parse_end_ = nullptr;
  size_t parse_drained_ = 0;
};

}  // namespace sluice::upstream
