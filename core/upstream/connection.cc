#include "core/upstream/connection.h"

#include <event2/buffer.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "core/upstream/pool.h"

namespace sluice::upstream {
namespace {

constexpr size_t kWriteLowWatermark = 64 * 1024;
constexpr uint64_t kPeekAfterIdleMs = 1000;

}  // namespace

http::ParserLimits UpstreamConnection::responseLimits(uint32_t max_header_bytes,
                                                      uint32_t max_header_count) {
  // A bounded header section protects the worker's memory from a broken backend.
  http::ParserLimits l;
  l.max_target_bytes = 0;
  l.max_header_bytes = max_header_bytes;
  l.max_header_count = max_header_count;
  l.max_body_bytes = 0;
  return l;
}

UpstreamConnection::UpstreamConnection(event::Worker& worker, std::shared_ptr<Host> host,
                                       const http::ParserLimits& limits)
    : worker_(worker),
      host_(std::move(host)),
      parser_(http::Parser::Type::kResponse, this, limits) {}

UpstreamConnection::~UpstreamConnection() {
  host_->stats().cx_active.dec();
  if (counted_in_ != nullptr) ClusterState::release(counted_in_->connections);
}

void UpstreamConnection::countIn(std::shared_ptr<ClusterState> state) {
  if (counted_in_ != nullptr) return;
  counted_in_ = std::move(state);
  counted_in_->connections.fetch_add(1, std::memory_order_relaxed);
}

std::unique_ptr<UpstreamConnection> UpstreamConnection::connect(
    event::Worker& worker, std::shared_ptr<Host> host, uint32_t connect_timeout_ms,
    const tls::ClientContext* tls, std::shared_ptr<tls::SessionCache> sessions,
    const http::ParserLimits* limits) {
  std::unique_ptr<UpstreamConnection> conn(new UpstreamConnection(
      worker, std::move(host), limits != nullptr ? *limits : responseLimits(65536, 100)));
  conn->host_->stats().cx_created.inc();
  conn->host_->stats().cx_active.inc();
  event::Transport::Options options;
  options.write_low_watermark = kWriteLowWatermark;
  event::Transport::Handlers handlers;
  handlers.on_data = &UpstreamConnection::onRead;
  handlers.on_drained = &UpstreamConnection::onDrained;
  handlers.on_event = &UpstreamConnection::onEvent;
  handlers.arg = conn.get();
  const Host& h = *conn->host_;
  std::unique_ptr<event::TransportIo> io;
  if (tls != nullptr) io = tls->newIo(h.address(), std::move(sessions));
  if (io == nullptr) io = std::make_unique<event::PlainIo>();
  // Reading starts once connected (the CONNECTED event); failures arrive from the loop.
  conn->transport_ =
      event::Transport::connect(worker.base(), h.sockAddr(), h.sockAddrLen(), std::move(io),
                                connect_timeout_ms, options, handlers);
  return conn;
}

void UpstreamConnection::attach(UpstreamCallbacks* callbacks, bool head_request, bool upgrade) {
  callbacks_ = callbacks;
  head_request_ = head_request;
  upgrade_ = upgrade;
  idle_pool_ = nullptr;
  ++exchanges_;
}

void UpstreamConnection::detach() { callbacks_ = nullptr; }

std::unique_ptr<event::Transport> UpstreamConnection::releaseTransport() {
  failed_ = true;  // nothing of the HTTP side may run again
  connected_ = false;
  keep_alive_ = false;
  callbacks_ = nullptr;
  return std::move(transport_);
}

void UpstreamConnection::setReadTimeout(uint32_t ms) {
  if (!connected_ || ms == read_timeout_ms_) return;
  read_timeout_ms_ = ms;
  transport_->setReadTimeout(ms);
}

void UpstreamConnection::pauseReading() {
  if (transport_ != nullptr) transport_->disableRead();
}

void UpstreamConnection::resumeReading() {
  if (failed_ || transport_ == nullptr) return;
  transport_->enableRead();
  parseInput();
}

uint64_t UpstreamConnection::lastActivity() const {
  timeval tv{};
  event_base_gettimeofday_cached(worker_.base(), &tv);  // no syscall: the loop's cached time
  return static_cast<uint64_t>(tv.tv_sec) * 1000u + static_cast<uint64_t>(tv.tv_usec) / 1000u;
}

bool UpstreamConnection::stillOpen() const {
  if (failed_ || transport_ == nullptr) return false;
  if (evbuffer_get_length(transport_->input()) > 0) return false;
  // A close by the upstream is normally seen by the loop before reuse; the race it leaves is
  // with upstreams closing idle connections after their keep-alive timeout (seconds). Peek only
  // at connections idle long enough for that (one syscall saved per request otherwise).
  if (lastActivity() - idle_since_ < kPeekAfterIdleMs) return true;
  return transport_->idleAndOpen();
}

void UpstreamConnection::setIdle(ConnPool* pool, uint32_t idle_timeout_ms) {
  idle_pool_ = pool;
  callbacks_ = nullptr;
  idle_since_ = lastActivity();
  setReadTimeout(idle_timeout_ms);
  transport_->enableRead();
}

void UpstreamConnection::fail(UpstreamError error, const std::string& detail) {
  if (failed_) return;
  failed_ = true;
  if (transport_ != nullptr) transport_->stop();
  if (idle_pool_ != nullptr) {
    ConnPool* pool = idle_pool_;
    idle_pool_ = nullptr;
    pool->remove(this);
    return;
  }
  if (callbacks_ != nullptr) {
    UpstreamCallbacks* cb = callbacks_;
    callbacks_ = nullptr;
    cb->onUpstreamError(error, detail);
  }
}

void UpstreamConnection::parseInput() {
  if (transport_ == nullptr) return;  // handed to a tunnel
  evbuffer* in = transport_->input();
  while (!failed_ && evbuffer_get_length(in) > 0) {
    if (callbacks_ == nullptr) {
      // Bytes while no exchange is running: the upstream broke the protocol. (A connection
      // whose response said close is being dropped anyway: its stray bytes are ignored.)
      if (!keep_alive_) {
        evbuffer_drain(in, evbuffer_get_length(in));
        return;
      }
      fail(UpstreamError::kBadResponse, "unexpected bytes on an idle connection");
      return;
    }
    if (!transport_->readEnabled()) return;  // paused by backpressure
    evbuffer_iovec vec;
    if (evbuffer_peek(in, -1, nullptr, &vec, 1) < 1) return;
    size_t consumed = 0;
    parse_begin_ = static_cast<const char*>(vec.iov_base);
    parse_end_ = parse_begin_ + vec.iov_len;
    parse_drained_ = 0;
    http::Parser::Result r = parser_.execute(parse_begin_, vec.iov_len, &consumed);
    parse_begin_ = parse_end_ = nullptr;
    if (consumed > parse_drained_) evbuffer_drain(in, consumed - parse_drained_);
    if (r == http::Parser::Result::kError) {
      fail(UpstreamError::kBadResponse, parser_.errorReason());
      return;
    }
    if (r == http::Parser::Result::kPaused) {
      if (switched_) {
        // 101 done: the rest is the new protocol's, left in the input for the tunnel.
        if (callbacks_ != nullptr) callbacks_->onUpstreamSwitched();
        return;
      }
      parser_.resume();
    }
  }
}

bool UpstreamConnection::moveBody(evbuffer* dst, const char* data, size_t len) {
  if (len < kMoveBodyMin || parse_end_ == nullptr || data + len != parse_end_ ||
      data < parse_begin_ + parse_drained_ || transport_ == nullptr) {
    return false;
  }
  evbuffer* in = transport_->input();
  // What the parser went through before the piece (the head, chunk framing) is drained first,
  // so the piece is all that is left of the front chain: evbuffer_remove_buffer relinks it.
  const size_t before = static_cast<size_t>(data - parse_begin_) - parse_drained_;
  if (before > 0) evbuffer_drain(in, before);
  parse_drained_ += before;
  if (evbuffer_remove_buffer(in, dst, len) != static_cast<int>(len)) return false;  // frozen
  parse_drained_ += len;
  return true;
}

void UpstreamConnection::onRead(void* arg) { static_cast<UpstreamConnection*>(arg)->parseInput(); }

void UpstreamConnection::onDrained(void* arg) {
  auto* self = static_cast<UpstreamConnection*>(arg);
  if (self->callbacks_ != nullptr) self->callbacks_->onUpstreamWritable();
}

void UpstreamConnection::onEvent(void* arg, short what) {
  auto* self = static_cast<UpstreamConnection*>(arg);
  if ((what & BEV_EVENT_CONNECTED) != 0) {
    self->connected_ = true;
    self->read_timeout_ms_ = 0;
    self->transport_->enableRead();
    if (self->callbacks_ != nullptr) self->callbacks_->onUpstreamConnected();
    return;
  }
  if (!self->connected_) {
    if ((what & BEV_EVENT_TIMEOUT) != 0) {
      self->fail(UpstreamError::kConnectTimeout, self->transport_->lastError());
    } else {
      self->fail(UpstreamError::kConnectFailed, self->transport_->lastError());
    }
    return;
  }
  if ((what & BEV_EVENT_WRITING) != 0) {
    self->fail(UpstreamError::kReset, "write to upstream failed: " + self->transport_->lastError());
    return;
  }
  if ((what & BEV_EVENT_TIMEOUT) != 0) {
    self->fail(UpstreamError::kTimeout, "response timeout");
    return;
  }
  if ((what & BEV_EVENT_EOF) != 0) self->input_ended_ = true;
  if ((what & BEV_EVENT_EOF) != 0 && self->callbacks_ != nullptr) {
    // Let the parser see everything that arrived, then the close (ends close-delimited bodies).
    self->parseInput();
    if (self->failed_ || self->callbacks_ == nullptr) {
      self->keep_alive_ = false;
      if (!self->failed_) self->failed_ = true;
      return;
    }
    if (self->parser_.inMessage()) {
      if (self->parser_.finish() == http::Parser::Result::kOk && !self->parser_.inMessage()) {
        self->failed_ = true;  // complete, but the connection is gone
        return;
      }
    }
    self->fail(UpstreamError::kReset, "upstream closed the connection");
    return;
  }
  self->fail(UpstreamError::kReset, (what & BEV_EVENT_EOF) != 0
                                        ? "upstream closed the connection"
                                        : "connection error: " + self->transport_->lastError());
}

int UpstreamConnection::onHead(http::MessageHead& head) {
  if (callbacks_ == nullptr) return -1;
  if (head.status == 101) {
    // RFC 9110 §15.2.2: only in answer to an Upgrade, and naming the protocol switched to.
    if (!upgrade_) {
      parser_.fail(502, "101 Switching Protocols to a request that asked for no upgrade");
      return -1;
    }
    if (!head.headers.has("upgrade")) {
      parser_.fail(502, "101 Switching Protocols without an Upgrade header");
      return -1;
    }
    keep_alive_ = false;
    switching_ = true;
    return callbacks_->onUpstreamHead(head) == 1 ? 1 : 0;
  }
  keep_alive_ = head.keep_alive;
  return callbacks_->onUpstreamHead(head) == 1 || head_request_ ? 1 : 0;
}

void UpstreamConnection::onBody(const char* data, size_t len) {
  if (callbacks_ != nullptr) callbacks_->onUpstreamBody(data, len);
}

bool UpstreamConnection::onMessageComplete() {
  if (switching_) {
    // Pause right after the 101 head (llhttp would go on parsing a new response when the 101
    // lacks Connection: upgrade); parseInput hands over from there.
    switching_ = false;
    switched_ = callbacks_ != nullptr;
    return true;
  }
  if (parser_.head().framing == http::Framing::kUntilClose) keep_alive_ = false;
  if (callbacks_ != nullptr) callbacks_->onUpstreamComplete();
  return false;
}

}  // namespace sluice::upstream
