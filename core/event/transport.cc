#include "core/event/transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/event/timeval.h"

namespace sluice::event {
namespace {

// Read sizes: a connection starts at kReadSize per read (a request or response head, a small
// body: one 16 KiB buffer, as HAProxy's). A read that fills what it asked for doubles the next
// one, up to kMaxReadSize, so a body that arrives faster than it is read (an upload, a download
// from a fast backend) takes half the reads, readiness events and writes; a short read goes
// back to kReadSize. 32 KiB, not more (measured with bench/bodies, docs/benchmarks.md): the
// buffer libevent allocates for a read stays under glibc's 128 KiB trim threshold (64 KiB and
// 128 KiB reads cost ~9,000 page faults per GiB as freed chains went back to the kernel, and
// more cache misses: uploads took 25% more CPU with 64 KiB reads), and the read that takes a
// stalled client's unsent bytes past the 256 KiB high watermark adds at most 32 KiB.
constexpr size_t kReadSize = 16 * 1024;
constexpr size_t kMaxReadSize = 32 * 1024;

}  // namespace

Transport::Transport(event_base* base, int fd, std::unique_ptr<TransportIo> io,
                     const Options& options, const Handlers& handlers)
    : base_(base),
      fd_(fd),
      io_(std::move(io)),
      options_(options),
      handlers_(handlers),
      input_(evbuffer_new()),
      output_(evbuffer_new()) {
  event_assign(&read_event_, base_, fd_, EV_READ | EV_PERSIST, &Transport::onReadable, this);
  event_assign(&write_event_, base_, fd_, EV_WRITE | EV_PERSIST, &Transport::onWritable, this);
  event_assign(&flush_event_, base_, -1, 0, &Transport::onFlush, this);
  evtimer_assign(&deadline_event_, base_, &Transport::onDeadline, this);
  output_cb_ = evbuffer_add_cb(output_, &Transport::onOutputAdded, this);
}

Transport::~Transport() {
  event_del(&read_event_);
  event_del(&write_event_);
  event_del(&flush_event_);
  event_del(&deadline_event_);
  evbuffer_remove_cb_entry(output_, output_cb_);
  evbuffer_free(input_);
  evbuffer_free(output_);
  io_.reset();  // before the socket it may still name
  if (fd_ >= 0) close(fd_);
}

std::unique_ptr<Transport> Transport::connect(event_base* base, const sockaddr* addr,
                                              socklen_t addr_len, std::unique_ptr<TransportIo> io,
                                              uint32_t timeout_ms, const Options& options,
                                              const Handlers& handlers) {
  int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (::connect(fd, addr, addr_len) != 0 && errno != EINPROGRESS) err = errno;
  }
  std::unique_ptr<Transport> t(new Transport(base, fd, std::move(io), options, handlers));
  t->phase_ = Phase::kConnecting;
  if (err != 0) {
    // Reported from the loop (the caller is not ready for callbacks yet): onWritable sees it.
    t->error_ = std::string(fd < 0 ? "cannot create socket: " : "") + strerror(err);
    t->write_armed_ = true;  // no event_add: the activation below delivers it once
    event_active(&t->write_event_, EV_WRITE, 0);
    return t;
  }
  if (timeout_ms > 0) {
    timeval tv = toTimeval(timeout_ms);
    evtimer_add(&t->deadline_event_, &tv);
    t->deadline_armed_ = true;
  }
  t->updateEvents();  // EV_WRITE tells when the connect finished
  return t;
}

void Transport::start() {
  if (phase_ != Phase::kHandshaking) return;
  if (options_.handshake_timeout_ms > 0) {
    // Armed before the first step so a client that never speaks is cut too; plain TCP
    // finishes in the call below and disarms it at once without having waited.
    handshake();
    if (phase_ == Phase::kHandshaking) {
      timeval tv = toTimeval(options_.handshake_timeout_ms);
      evtimer_add(&deadline_event_, &tv);
      deadline_armed_ = true;
    }
    return;
  }
  handshake();
}

void Transport::finishConnect() {
  int err = 0;
  socklen_t len = sizeof(err);
  if (!error_.empty()) {
    fail(BEV_EVENT_ERROR, error_);
    return;
  }
  if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    fail(BEV_EVENT_ERROR, strerror(err));
    return;
  }
  phase_ = Phase::kHandshaking;
  handshake();
}

void Transport::handshake() {
  IoStatus st = io_->handshake(fd_);
  switch (st) {
    case IoStatus::kOk:
      phase_ = Phase::kOpen;
      if (deadline_armed_) {
        event_del(&deadline_event_);
        deadline_armed_ = false;
      }
      updateEvents();
      emit(BEV_EVENT_CONNECTED);
      if (phase_ != Phase::kOpen) return;
      // A TLS handshake may have read the peer's first bytes along with its last handshake
      // message (read-ahead): they wait in the Io, and the socket will not say so.
      if (io_->hasPending()) event_active(&read_event_, EV_READ, 0);
      if (evbuffer_get_length(output_) > 0) flush();
      return;
    case IoStatus::kWantRead:
    case IoStatus::kWantWrite:
      handshake_wants_write_ = st == IoStatus::kWantWrite;
      updateEvents();
      return;
    case IoStatus::kEof:
      fail(BEV_EVENT_ERROR,
           io_->lastError().empty() ? "peer closed during the handshake" : io_->lastError());
      return;
    case IoStatus::kError:
      fail(BEV_EVENT_ERROR, io_->lastError());
      return;
  }
}

void Transport::fail(short what, std::string reason) {
  if (phase_ == Phase::kDead) return;
  phase_ = Phase::kDead;
  error_ = std::move(reason);
  if (deadline_armed_) {
    event_del(&deadline_event_);
    deadline_armed_ = false;
  }
  updateEvents();
  emit(what);
}

void Transport::updateEvents() {
  bool want_read = false;
  bool want_write = false;
  uint32_t timeout = 0;
  switch (phase_) {
    case Phase::kConnecting:
      want_write = true;
      break;
    case Phase::kHandshaking:
      want_read = !handshake_wants_write_;
      want_write = handshake_wants_write_;
      break;
    case Phase::kOpen: {
      bool reading = read_enabled_ && !read_full_ && !read_wants_write_;
      want_read = reading || write_wants_read_;
      if (reading) timeout = read_timeout_ms_;
      want_write = write_blocked_ || read_wants_write_;
      break;
    }
    case Phase::kDead:
      break;
  }
  if (!want_read) {
    if (read_armed_) event_del(&read_event_);
    read_armed_ = false;
  } else if (!read_armed_ || armed_timeout_ms_ != timeout) {
    // Each change is a timer-heap operation (and an epoll_ctl when newly armed): skip no-ops.
    // event_add with no timeout keeps an old one, so going to "none" drops just the timer
    // (event_del + event_add would cost two epoll_ctl calls, once per pooled request).
    if (read_armed_ && timeout == 0) {
      event_remove_timer(&read_event_);
    } else if (timeout == 0) {
      event_add(&read_event_, nullptr);
    } else {
      timeval tv = toTimeval(timeout);
      event_add(&read_event_, &tv);
    }
    read_armed_ = true;
    armed_timeout_ms_ = timeout;
  }
  if (want_write != write_armed_) {
    if (want_write) {
      event_add(&write_event_, nullptr);
    } else {
      event_del(&write_event_);
    }
    write_armed_ = want_write;
  }
}

void Transport::enableRead() {
  if (read_enabled_) return;
  read_enabled_ = true;
  updateEvents();
  // Bytes a TLS Io decrypted ahead wait for no readiness event.
  if (phase_ == Phase::kOpen && io_->hasPending()) event_active(&read_event_, EV_READ, 0);
}

void Transport::disableRead() {
  if (!read_enabled_) return;
  read_enabled_ = false;
  updateEvents();
}

void Transport::setReadTimeout(uint32_t ms) {
  if (ms == read_timeout_ms_) return;
  read_timeout_ms_ = ms;
  updateEvents();
}

void Transport::resumeIfDrained() {
  if (!read_full_) return;
  if (options_.read_high_watermark != 0 &&
      evbuffer_get_length(input_) >= options_.read_high_watermark) {
    return;
  }
  read_full_ = false;
  updateEvents();
  if (phase_ == Phase::kOpen && io_->hasPending()) event_active(&read_event_, EV_READ, 0);
}

void Transport::onReadable(evutil_socket_t, short what, void* arg) {
  auto* self = static_cast<Transport*>(arg);
  switch (self->phase_) {
    case Phase::kHandshaking:
      self->handshake();
      return;
    case Phase::kOpen:
      break;
    default:
      return;
  }
  if ((what & EV_TIMEOUT) != 0) {
    self->emit(BEV_EVENT_READING | BEV_EVENT_TIMEOUT);
    return;
  }
  if (self->write_wants_read_) {
    self->write_wants_read_ = false;
    self->updateEvents();
    self->flush();
    if (self->phase_ != Phase::kOpen) return;
  }
  if (self->read_enabled_ && !self->read_full_ && !self->read_wants_write_) self->readOnce();
}

void Transport::readOnce() {
  size_t want = read_size_;
  if (options_.read_high_watermark != 0) {
    size_t have = evbuffer_get_length(input_);
    if (have >= options_.read_high_watermark) {
      read_full_ = true;
      updateEvents();
      return;
    }
    if (options_.read_high_watermark - have < want) want = options_.read_high_watermark - have;
  }
  evbuffer_iovec vec[2];
  int n_vec = evbuffer_reserve_space(input_, static_cast<ev_ssize_t>(want), vec, 2);
  if (n_vec <= 0) return;
  iovec iov[2];
  size_t left = want;  // reserve may hand out more than asked: read no more than allowed
  for (int i = 0; i < n_vec; ++i) {
    iov[i].iov_base = vec[i].iov_base;
    iov[i].iov_len = vec[i].iov_len < left ? vec[i].iov_len : left;
    left -= iov[i].iov_len;
  }
  size_t n = 0;
  IoStatus st = io_->read(fd_, iov, n_vec, &n);
  if (st == IoStatus::kOk && n > 0) {
    if (n < want) {
      read_size_ = kReadSize;
    } else if (want == read_size_ && read_size_ < kMaxReadSize) {
      read_size_ *= 2;  // filled: more was waiting
    }
    size_t rest = n;
    int used = 0;
    for (int i = 0; i < n_vec && rest > 0; ++i) {
      size_t take = vec[i].iov_len < rest ? vec[i].iov_len : rest;
      vec[i].iov_len = take;
      rest -= take;
      used = i + 1;
    }
    evbuffer_commit_space(input_, vec, used);
  } else {
    evbuffer_commit_space(input_, vec, 0);
  }
  switch (st) {
    case IoStatus::kOk:
      if (io_->hasPending()) event_active(&read_event_, EV_READ, 0);  // more without the socket
      handlers_.on_data(handlers_.arg);
      return;
    case IoStatus::kWantRead:
      return;
    case IoStatus::kWantWrite:
      read_wants_write_ = true;
      updateEvents();
      return;
    case IoStatus::kEof:
      emit(BEV_EVENT_READING | BEV_EVENT_EOF);
      return;
    case IoStatus::kError:
      error_ = io_->lastError();
      emit(BEV_EVENT_READING | BEV_EVENT_ERROR);
      return;
  }
}

void Transport::onWritable(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Transport*>(arg);
  switch (self->phase_) {
    case Phase::kConnecting:
      self->finishConnect();
      return;
    case Phase::kHandshaking:
      self->handshake();
      return;
    case Phase::kOpen:
      break;
    case Phase::kDead:
      return;
  }
  if (self->read_wants_write_) {
    self->read_wants_write_ = false;
    self->updateEvents();
    self->readOnce();
    if (self->phase_ != Phase::kOpen) return;
  }
  if (self->write_blocked_) {
    self->write_blocked_ = false;
    self->updateEvents();
    self->flush();
  }
}

void Transport::onDeadline(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Transport*>(arg);
  self->deadline_armed_ = false;
  self->fail(BEV_EVENT_TIMEOUT,
             self->phase_ == Phase::kConnecting ? "connect timeout" : "handshake timeout");
}

void Transport::onOutputAdded(evbuffer*, const evbuffer_cb_info* info, void* arg) {
  auto* self = static_cast<Transport*>(arg);
  if (info->n_added == 0 || self->phase_ != Phase::kOpen || self->write_blocked_ ||
      self->write_wants_read_) {
    return;
  }
  event_active(&self->flush_event_, 0, 0);  // once, at the end of this loop turn
}

void Transport::onFlush(evutil_socket_t, short, void* arg) {
  static_cast<Transport*>(arg)->flush();
}

void Transport::flush() {
  if (phase_ != Phase::kOpen || write_blocked_ || write_wants_read_ ||
      evbuffer_get_length(output_) == 0) {
    return;
  }
  IoStatus st = io_->write(fd_, output_);
  if (st == IoStatus::kError || st == IoStatus::kEof) {
    error_ = io_->lastError();
    emit(BEV_EVENT_WRITING | BEV_EVENT_ERROR);
    return;
  }
  if (st == IoStatus::kWantWrite && evbuffer_get_length(output_) > 0) {
    write_blocked_ = true;  // the socket is full: EV_WRITE tells when it drains
    updateEvents();
  } else if (st == IoStatus::kWantRead) {
    write_wants_read_ = true;
    updateEvents();
  }
  if (evbuffer_get_length(output_) <= options_.write_low_watermark) {
    handlers_.on_drained(handlers_.arg);
  }
}

void Transport::shutdownWrite() {
  if (phase_ == Phase::kOpen) io_->shutdown(fd_);
  ::shutdown(fd_, SHUT_WR);
}

void Transport::stop() {
  if (phase_ == Phase::kDead) return;
  phase_ = Phase::kDead;
  if (deadline_armed_) {
    event_del(&deadline_event_);
    deadline_armed_ = false;
  }
  event_del(&flush_event_);
  updateEvents();
}

void Transport::resetOnClose() {
  linger lg{1, 0};
  setsockopt(fd_, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

// ---------------------------------------------------------------- PlainIo

IoStatus PlainIo::read(int fd, const iovec* iov, int n_iov, size_t* n) {
  ssize_t r = readv(fd, iov, n_iov);
  if (r > 0) {
    *n = static_cast<size_t>(r);
    return IoStatus::kOk;
  }
  if (r == 0) return IoStatus::kEof;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return IoStatus::kWantRead;
  error_ = strerror(errno);
  return IoStatus::kError;
}

IoStatus PlainIo::write(int fd, evbuffer* out) {
  errno = 0;
  int n = evbuffer_write(out, fd);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    error_ = strerror(errno);
    return IoStatus::kError;
  }
  return evbuffer_get_length(out) == 0 ? IoStatus::kOk : IoStatus::kWantWrite;
}

bool PlainIo::idleAndOpen(int fd) {
  char byte;
  ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace sluice::event
