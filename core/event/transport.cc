#include "core/event/transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/event/timeval.h"
#include "core/event/worker.h"

namespace sluice::event {
namespace {

// Read sizes: a connection starts at kReadSize per read (a request or response head, a small
// body: one 16 KiB buffer, as HAProxy's). A read that fills what it asked for doubles the next
// one, up to kMaxReadSize, so a body that arrives faster than it is read (an upload, a download
// from a fast backend) takes half the reads, readiness events and writes; a short read goes
// back to kReadSize. 32 KiB, not more (measured with bench/bodies,
// docs/benchmarks/bodies.md): the buffer libevent allocates for a read stays under glibc's
// 128 KiB trim threshold (64 KiB and 128 KiB reads cost ~9,000 page faults per GiB as freed chains
// went back to the kernel, and more cache misses: uploads took 25% more CPU with 64 KiB reads), and
// the read that takes a stalled client's unsent bytes past the 256 KiB high watermark adds at most
// 32 KiB.
constexpr size_t kReadSize = 16 * 1024;
constexpr size_t kMaxReadSize = 32 * 1024;
// Reads of at most this much go into a chain of 1 KiB (libevent's smallest, with its header).
constexpr size_t kSmallRead = 1024 - 64;
constexpr uint32_t kLargeReads = 8;

// The part of a read beyond a small reservation (see readOnce). Worker threads only, used
// within one call.
thread_local char t_scratch[kReadSize];

// Transports whose output was appended to while a transport callback runs on this thread: they
// are flushed when the outermost one returns (Transport::CallbackScope).
thread_local Transport* t_flush_head = nullptr;

uint64_t readMonotonicUs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

// monotonicNowUs()'s state: inside a transport callback, and the value read in it (0: not read
// yet). Here rather than Worker::transport_callback_depth: a thread_local of this file is a
// plain %fs access, one defined elsewhere goes through its TLS wrapper function.
thread_local bool t_in_callback = false;
thread_local uint64_t t_callback_now_us = 0;

uint64_t monotonicUs() { return monotonicNowUs(); }

}  // namespace

uint64_t monotonicNowUs() {
  if (!t_in_callback) return readMonotonicUs();
  if (t_callback_now_us == 0) t_callback_now_us = readMonotonicUs();
  return t_callback_now_us;
}

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
  // Only ever activated, never added: EV_PERSIST spares libevent an event_del per activation.
  event_assign(&flush_event_, base_, -1, EV_PERSIST, &Transport::onFlush, this);
  evtimer_assign(&deadline_event_, base_, &Transport::onDeadline, this);
  evtimer_assign(&read_timer_, base_, &Transport::onReadTimer, this);
}

// Marks a callback from the event loop into a transport (readable, writable, timers, flush).
// Output appended inside it, to this transport or any other (a response written while reading
// the upstream), is flushed when the outermost one returns: after everything the callback did,
// as the end of the loop turn would, without an event activation per flush.
// Objects the callback handed to Worker::deferDelete are destroyed then too (the callback has
// returned; nothing of libevent's touches its event after that): no event activation per
// deferred delete either.
class Transport::CallbackScope {
 public:
  CallbackScope() {
    if (Worker::transport_callback_depth++ == 0) {
      t_in_callback = true;
      t_callback_now_us = 0;
    }
  }
  ~CallbackScope() {
    if (Worker::transport_callback_depth == 1) {
      // Still inside: flushes that on_drained handlers or destructors cause, and objects they
      // defer, join the lists.
      Worker* worker = Worker::current();
      do {
        while (Transport* t = t_flush_head) {
          t_flush_head = t->next_flush_;
          t->next_flush_ = nullptr;
          t->flush_listed_ = false;
          t->flush_scheduled_ = false;
          t->flush();
        }
        if (worker != nullptr) worker->deleteDeferred();
      } while (t_flush_head != nullptr);
      t_in_callback = false;
      t_callback_now_us = 0;
    }
    --Worker::transport_callback_depth;
  }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
};

void Transport::scheduleFlush() {
  flush_scheduled_ = true;
  if (Worker::transport_callback_depth > 0) {
    flush_listed_ = true;
    next_flush_ = t_flush_head;
    t_flush_head = this;
    return;
  }
  event_active(&flush_event_, 0, 0);  // from elsewhere (a timer, a post): at the end of the turn
}

Transport::~Transport() {
  if (flush_listed_) {
    for (Transport** p = &t_flush_head; *p != nullptr; p = &(*p)->next_flush_) {
      if (*p == this) {
        *p = next_flush_;
        break;
      }
    }
  }
  event_del(&read_event_);
  event_del(&write_event_);
  event_del(&flush_event_);
  event_del(&deadline_event_);
  event_del(&read_timer_);
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
  disarmReadTimer();
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
  // The I/O events carry no timeout: libevent re-adds a persistent event's timeout (a timer-heap
  // operation) after every activation, twice per proxied request. read_timer_ does it instead.
  if (want_read != read_armed_) {
    if (want_read) {
      event_add(&read_event_, nullptr);
    } else {
      event_del(&read_event_);
    }
    read_armed_ = want_read;
  }
  if (timeout != period_timeout_ms_) startReadPeriod(timeout);
  if (want_write != write_armed_) {
    if (want_write) {
      event_add(&write_event_, nullptr);
    } else {
      event_del(&write_event_);
    }
    write_armed_ = want_write;
  }
}

// The read timeout is lazy, as libev's documentation recommends for inactivity timeouts and as
// nginx keeps its timer tree: a readiness event only notes the time (period_start_us_), and
// read_timer_ is re-armed only when a deadline comes earlier than the one it is armed for. When
// it fires before the period's real deadline (bytes arrived meanwhile, or the timeout grew) it
// re-arms itself for what is left; when no period runs any more it does nothing. So a pooled
// upstream connection switching between its idle timeout and response_timeout_ms, or a
// downstream one reading a request, costs no timer operation per request.
void Transport::startReadPeriod(uint32_t timeout_ms) {
  period_timeout_ms_ = timeout_ms;
  if (timeout_ms == 0) return;  // an armed timer fires once more and finds nothing to do
  const uint64_t now = monotonicUs();
  period_start_us_ = now;
  armReadTimer(now + uint64_t{timeout_ms} * 1000, now);
}

void Transport::armReadTimer(uint64_t due_us, uint64_t now_us) {
  if (timer_due_us_ != 0 && timer_due_us_ <= due_us) return;  // fires first, then re-checks
  const uint64_t wait_us = due_us > now_us ? due_us - now_us : 0;
  timeval tv = toTimevalUs(wait_us);
  evtimer_add(&read_timer_, &tv);
  timer_due_us_ = due_us;
}

void Transport::disarmReadTimer() {
  if (timer_due_us_ == 0) return;
  event_del(&read_timer_);
  timer_due_us_ = 0;
}

void Transport::onReadTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Transport*>(arg);
  CallbackScope scope;
  self->timer_due_us_ = 0;
  if (self->period_timeout_ms_ == 0 || self->phase_ != Phase::kOpen) return;
  const uint64_t now = monotonicUs();
  const uint64_t timeout_us = uint64_t{self->period_timeout_ms_} * 1000;
  const uint64_t due = self->period_start_us_ + timeout_us;
  if (now < due) {
    self->armReadTimer(due, now);
    return;
  }
  // As libevent did with a persistent event: the timeout repeats while nothing arrives.
  self->period_start_us_ = now;
  self->armReadTimer(now + timeout_us, now);
  self->emit(BEV_EVENT_READING | BEV_EVENT_TIMEOUT);
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

void Transport::onReadable(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Transport*>(arg);
  CallbackScope scope;
  switch (self->phase_) {
    case Phase::kHandshaking:
      self->handshake();
      return;
    case Phase::kOpen:
      break;
    default:
      return;
  }
  // Any readiness restarts the inactivity period (libevent re-added the timeout here).
  if (self->period_timeout_ms_ != 0) self->period_start_us_ = monotonicUs();
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
  const size_t have = evbuffer_get_length(input_);  // asked once: an out-of-line libevent call
  if (options_.read_high_watermark != 0) {
    if (have >= options_.read_high_watermark) {
      read_full_ = true;
      updateEvents();
      return;
    }
    if (options_.read_high_watermark - have < want) want = options_.read_high_watermark - have;
  }
  // While reads stay small (requests and responses of a few hundred bytes) they go into a small
  // reservation, a chain malloc serves from its per-thread cache, and the rest of the allowed
  // size into the thread's scratch buffer, copied into input() only when more arrived. (A 16 KiB
  // reservation is a 32 KiB chain, 16 KiB plus libevent's header rounded up to a power of two,
  // from the main heap, freed again once the parser has drained it: twice per proxied request.)
  // After a read that did not fit, the next kLargeReads reads go straight into a reservation of
  // the whole size (a body streams, or responses are large: no copy).
  const bool small = large_reads_left_ == 0 && want > kSmallRead;
  // Small reads with nothing buffered go to the owner straight from the scratch buffer
  // (Handlers::on_bytes).
  if (small && handlers_.on_bytes != nullptr && have == 0) {
    readDirect(want < sizeof(t_scratch) ? want : sizeof(t_scratch));
    return;
  }
  // (A small read follows short reads, which set read_size_ back to kReadSize: the scratch
  // buffer holds the rest. Kept so if that ever changes.)
  if (small && want > kSmallRead + sizeof(t_scratch)) want = kSmallRead + sizeof(t_scratch);
  evbuffer_iovec vec[2];
  int n_vec =
      evbuffer_reserve_space(input_, static_cast<ev_ssize_t>(small ? kSmallRead : want), vec, 2);
  if (n_vec <= 0) return;
  iovec iov[3];
  size_t left = want;  // reserve may hand out more than asked: read no more than allowed
  for (int i = 0; i < n_vec; ++i) {
    iov[i].iov_base = vec[i].iov_base;
    iov[i].iov_len = vec[i].iov_len < left ? vec[i].iov_len : left;
    left -= iov[i].iov_len;
  }
  const size_t in_place = want - left;
  int n_iov = n_vec;
  if (left > 0) {
    iov[n_iov].iov_base = t_scratch;
    iov[n_iov].iov_len = left;
    ++n_iov;
  }
  size_t n = 0;
  IoStatus st = io_->read(fd_, iov, n_iov, &n);
  if (st == IoStatus::kOk && n > 0) {
    noteReadSize(n, want);
    size_t rest = n < in_place ? n : in_place;
    int used = 0;
    for (int i = 0; i < n_vec && rest > 0; ++i) {
      size_t take = iov[i].iov_len < rest ? iov[i].iov_len : rest;
      vec[i].iov_len = take;
      rest -= take;
      used = i + 1;
    }
    evbuffer_commit_space(input_, vec, used);
    if (n > in_place) evbuffer_add(input_, t_scratch, n - in_place);
  } else {
    evbuffer_commit_space(input_, vec, 0);
  }
  afterRead(st);
}

void Transport::noteReadSize(size_t n, size_t want) {
  if (n < want) {
    read_size_ = kReadSize;
  } else if (want == read_size_ && read_size_ < kMaxReadSize) {
    read_size_ *= 2;  // filled: more was waiting
  }
  if (n > kSmallRead) {
    large_reads_left_ = kLargeReads;
  } else if (large_reads_left_ > 0) {
    --large_reads_left_;
  }
}

void Transport::readDirect(size_t want) {
  iovec iov{t_scratch, want};
  size_t n = 0;
  IoStatus st = io_->read(fd_, &iov, 1, &n);
  if (st != IoStatus::kOk || n == 0) {
    afterRead(st);
    return;
  }
  noteReadSize(n, want);
  if (io_->hasPending()) event_active(&read_event_, EV_READ, 0);  // more without the socket
  const size_t used = handlers_.on_bytes(handlers_.arg, t_scratch, n);
  if (used < n) evbuffer_add(input_, t_scratch + used, n - used);
}

void Transport::afterRead(IoStatus st) {
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
  CallbackScope scope;
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
  CallbackScope scope;
  self->deadline_armed_ = false;
  self->fail(BEV_EVENT_TIMEOUT,
             self->phase_ == Phase::kConnecting ? "connect timeout" : "handshake timeout");
}

void Transport::onFlush(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Transport*>(arg);
  CallbackScope scope;
  self->flush_scheduled_ = false;  // bytes appended from here on schedule another flush
  self->flush();
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
  // TransportIo::write's contract: kOk leaves output() empty, kWantWrite leaves bytes in it; so
  // the common case (all written) asks the buffer for its length no more.
  if (st == IoStatus::kOk) {
    handlers_.on_drained(handlers_.arg);
    return;
  }
  if (st == IoStatus::kWantWrite) {
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
  flush_scheduled_ = false;
  updateEvents();
  disarmReadTimer();
}

int Transport::releaseFd() {
  stop();
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Transport::resetOnClose() {
  linger lg{1, 0};
  setsockopt(fd_, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

// ---------------------------------------------------------------- PlainIo

IoStatus PlainIo::read(int fd, const iovec* iov, int n_iov, size_t* n) {
  // One buffer (the common case: Transport::readDirect's scratch buffer) is read with recv(2):
  // the kernel's readv path also imports the iovec array and takes the file-position path
  // (fdget_pos), about 2% of a proxied request's CPU on loopback (perf); nginx and HAProxy
  // read with recv too.
  ssize_t r = n_iov == 1 ? recv(fd, iov[0].iov_base, iov[0].iov_len, 0) : readv(fd, iov, n_iov);
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
  // Bytes in one chain (a head and a small body appended to it: most writes) go with send(2),
  // for the reason read() uses recv(2); more chains with libevent's writev.
  evbuffer_iovec first[2];
  ssize_t n;
  if (evbuffer_peek(out, -1, nullptr, first, 2) == 1) {
    n = send(fd, first[0].iov_base, first[0].iov_len, MSG_NOSIGNAL);
    if (n > 0) evbuffer_drain(out, static_cast<size_t>(n));
  } else {
    n = evbuffer_write(out, fd);
  }
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
