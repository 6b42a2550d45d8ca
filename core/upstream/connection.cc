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

timeval toTimeval(uint32_t ms) {
  return timeval{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
}

// Upstream responses get generous limits: they are the backends' own, not an attacker's,
// but a bounded header section still protects the worker's memory.
http::ParserLimits responseLimits() {
  http::ParserLimits l;
  l.max_target_bytes = 0;
  l.max_header_bytes = 256 * 1024;
  l.max_header_count = 500;
  l.max_body_bytes = 0;
  return l;
}

}  // namespace

UpstreamConnection::UpstreamConnection(event::Worker& worker, std::shared_ptr<Host> host)
    : worker_(worker),
      host_(std::move(host)),
      parser_(http::Parser::Type::kResponse, this, responseLimits()) {}

UpstreamConnection::~UpstreamConnection() {
  writer_.reset();  // before the bufferevent they hook into
  reader_.reset();
  if (bev_ != nullptr) bufferevent_free(bev_);
  host_->stats().cx_active.dec();
}

std::unique_ptr<UpstreamConnection> UpstreamConnection::connect(event::Worker& worker,
                                                                std::shared_ptr<Host> host,
                                                                uint32_t connect_timeout_ms) {
  std::unique_ptr<UpstreamConnection> conn(new UpstreamConnection(worker, std::move(host)));
  conn->host_->stats().cx_created.inc();
  conn->host_->stats().cx_active.inc();
  conn->bev_ = bufferevent_socket_new(worker.base(), -1, BEV_OPT_CLOSE_ON_FREE);
  bufferevent_setcb(conn->bev_, &UpstreamConnection::onRead, &UpstreamConnection::onWrite,
                    &UpstreamConnection::onEvent, conn.get());
  bufferevent_setwatermark(conn->bev_, EV_WRITE, kWriteLowWatermark, 0);
  conn->writer_ = std::make_unique<event::DirectWrite>(
      conn->bev_, kWriteLowWatermark, &UpstreamConnection::onDrained,
      &UpstreamConnection::onWriteFailed, conn.get());
  timeval tv = toTimeval(connect_timeout_ms);
  bufferevent_set_timeouts(conn->bev_, nullptr, &tv);  // libevent times connect by EV_WRITE
  bufferevent_enable(conn->bev_, EV_WRITE);            // reading starts once connected (DirectRead)
  const Host& h = *conn->host_;
  if (bufferevent_socket_connect(conn->bev_, const_cast<sockaddr*>(h.sockAddr()),
                                 static_cast<int>(h.sockAddrLen())) != 0) {
    // Reported through onEvent (BEV_EVENT_ERROR) on the next loop turn by libevent; when the
    // socket could not even be created, mark it so attach() reports it.
    conn->failed_ = true;
  } else {
    evutil_socket_t fd = bufferevent_getfd(conn->bev_);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn->reader_ = std::make_unique<event::DirectRead>(
        conn->bev_, 0, [](void* arg) { onRead(nullptr, arg); },
        [](void* arg, short what) { onEvent(nullptr, what, arg); }, conn.get());
  }
  return conn;
}

void UpstreamConnection::attach(UpstreamCallbacks* callbacks, bool head_request) {
  callbacks_ = callbacks;
  head_request_ = head_request;
  idle_pool_ = nullptr;
  ++exchanges_;
  if (failed_) {
    // The connect could not start: say so once the caller's stack unwinds.
    worker_.post([this] {
      if (callbacks_ != nullptr)
        callbacks_->onUpstreamError(UpstreamError::kConnectFailed, "cannot start connect");
    });
  }
}

void UpstreamConnection::detach() { callbacks_ = nullptr; }

void UpstreamConnection::setReadTimeout(uint32_t ms) {
  if (bev_ == nullptr || !connected_ || ms == read_timeout_ms_) return;
  read_timeout_ms_ = ms;
  if (reader_ != nullptr) reader_->setTimeout(ms);
}

void UpstreamConnection::pauseReading() {
  if (reader_ != nullptr) reader_->disable();
}

void UpstreamConnection::resumeReading() {
  if (bev_ == nullptr || failed_ || reader_ == nullptr) return;
  reader_->enable();
  parseInput();
}

uint64_t UpstreamConnection::lastActivity() const {
  timeval tv{};
  event_base_gettimeofday_cached(worker_.base(), &tv);  // no syscall: the loop's cached time
  return static_cast<uint64_t>(tv.tv_sec) * 1000u + static_cast<uint64_t>(tv.tv_usec) / 1000u;
}

bool UpstreamConnection::stillOpen() const {
  if (bev_ == nullptr || failed_) return false;
  if (evbuffer_get_length(bufferevent_get_input(bev_)) > 0) return false;
  // A close by the upstream is normally seen by the loop before reuse; the race it leaves is
  // with upstreams closing idle connections after their keep-alive timeout (seconds). Peek only
  // at connections idle long enough for that (one syscall saved per request otherwise).
  if (lastActivity() - idle_since_ < kPeekAfterIdleMs) return true;
  char byte;
  ssize_t n = recv(bufferevent_getfd(bev_), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

void UpstreamConnection::setIdle(ConnPool* pool, uint32_t idle_timeout_ms) {
  idle_pool_ = pool;
  callbacks_ = nullptr;
  idle_since_ = lastActivity();
  setReadTimeout(idle_timeout_ms);
  if (reader_ != nullptr) reader_->enable();
}

void UpstreamConnection::fail(UpstreamError error, const std::string& detail) {
  if (failed_) return;
  failed_ = true;
  if (bev_ != nullptr) bufferevent_disable(bev_, EV_READ | EV_WRITE);
  if (reader_ != nullptr) reader_->disable();
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
  evbuffer* in = bufferevent_get_input(bev_);
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
    if (reader_ == nullptr || !reader_->enabled()) return;  // paused by backpressure
    evbuffer_iovec vec;
    if (evbuffer_peek(in, -1, nullptr, &vec, 1) < 1) return;
    size_t consumed = 0;
    http::Parser::Result r =
        parser_.execute(static_cast<const char*>(vec.iov_base), vec.iov_len, &consumed);
    evbuffer_drain(in, consumed);
    if (r == http::Parser::Result::kError) {
      fail(UpstreamError::kBadResponse, parser_.errorReason());
      return;
    }
    if (r == http::Parser::Result::kPaused) parser_.resume();
  }
}

void UpstreamConnection::onRead(bufferevent*, void* arg) {
  static_cast<UpstreamConnection*>(arg)->parseInput();
}

void UpstreamConnection::onWrite(bufferevent*, void* arg) {
  auto* self = static_cast<UpstreamConnection*>(arg);
  self->writer_->onBufferEventWrote();
  if (self->callbacks_ != nullptr) self->callbacks_->onUpstreamWritable();
}

void UpstreamConnection::onDrained(void* arg) {
  auto* self = static_cast<UpstreamConnection*>(arg);
  if (self->callbacks_ != nullptr) self->callbacks_->onUpstreamWritable();
}

void UpstreamConnection::onWriteFailed(void* arg) {
  static_cast<UpstreamConnection*>(arg)->fail(UpstreamError::kReset, "write to upstream failed");
}

void UpstreamConnection::onEvent(bufferevent*, short what, void* arg) {
  auto* self = static_cast<UpstreamConnection*>(arg);
  if ((what & BEV_EVENT_CONNECTED) != 0) {
    self->connected_ = true;
    bufferevent_set_timeouts(self->bev_, nullptr, nullptr);  // the connect timeout is over
    self->read_timeout_ms_ = 0;
    if (self->reader_ != nullptr) self->reader_->enable();
    self->writer_->start();
    if (self->callbacks_ != nullptr) self->callbacks_->onUpstreamConnected();
    return;
  }
  if (!self->connected_) {
    if ((what & BEV_EVENT_TIMEOUT) != 0) {
      self->fail(UpstreamError::kConnectTimeout, "connect timeout");
    } else {
      int err = EVUTIL_SOCKET_ERROR();
      self->fail(UpstreamError::kConnectFailed,
                 err != 0 ? evutil_socket_error_to_string(err) : "connect failed");
    }
    return;
  }
  if ((what & BEV_EVENT_TIMEOUT) != 0) {
    self->fail(UpstreamError::kTimeout, "response timeout");
    return;
  }
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
  int err = EVUTIL_SOCKET_ERROR();
  self->fail(UpstreamError::kReset,
             (what & BEV_EVENT_EOF) != 0
                 ? "upstream closed the connection"
                 : (err != 0 ? evutil_socket_error_to_string(err) : "connection error"));
}

int UpstreamConnection::onHead(http::MessageHead& head) {
  if (callbacks_ == nullptr) return -1;
  if (head.status == 101) {
    // sluice never forwards Upgrade, so a 101 means a broken upstream.
    parser_.fail(502, "unexpected 101 Switching Protocols (sluice does not forward Upgrade)");
    return -1;
  }
  keep_alive_ = head.keep_alive;
  return callbacks_->onUpstreamHead(head) == 1 || head_request_ ? 1 : 0;
}

void UpstreamConnection::onBody(const char* data, size_t len) {
  if (callbacks_ != nullptr) callbacks_->onUpstreamBody(data, len);
}

bool UpstreamConnection::onMessageComplete() {
  if (parser_.head().framing == http::Framing::kUntilClose) keep_alive_ = false;
  if (callbacks_ != nullptr) callbacks_->onUpstreamComplete();
  return false;
}

}  // namespace sluice::upstream
