// The connection under HTTP/1.1: a non-blocking socket with an input and an output buffer,
// plain TCP or TLS behind the same interface (DESIGN.md §10), so the codec never knows which it
// has. The TransportIo decides how bytes move (PlainIo: readv/writev; tls::TlsIo: OpenSSL).
//
// Reading: one read per readiness event into input(); the owner's on_data runs after each. A
// read asks for 16 KiB, twice as much after each read that filled what it asked for (up to
// 32 KiB: a body arriving faster than it is read), 16 KiB again after a short one; never more
// than the high watermark leaves room for. Writing: bytes appended to output() go out together
// (one writev for plain TCP, instead of an EV_WRITE round trip of two epoll_ctl calls) when the
// transport callback they were appended in returns (any transport's: a response written while
// the upstream's bytes are read goes out when that read callback returns), or at the end of the
// loop turn when appended elsewhere (a timer); only when the socket cannot take them all does
// the transport wait for EV_WRITE. The owner's on_drained runs whenever a write left the output
// at or below the low watermark.
//
// Events (on_event, libevent's BEV_EVENT_* bits, so owners keep their bufferevent handlers):
//   CONNECTED            connect and handshake done (accepted sockets: handshake done)
//   READING|EOF          the peer closed
//   READING|ERROR        a read failed;  WRITING|ERROR  a write failed (peer reset)
//   READING|TIMEOUT      no bytes for the read timeout while reading was enabled
//   TIMEOUT              connect or handshake did not finish in time
//   ERROR                connect or handshake failed
// lastError() says why for ERROR and TIMEOUT. After ERROR or a connect/handshake TIMEOUT the
// transport is dead: it moves no more bytes and reports nothing more.
//
// Worker thread only (its event_base's). The owner keeps it alive until the callback stack
// has unwound (deferred delete), as callbacks may close or drop it.
#pragma once

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/event/transport_io.h"

namespace sluice::event {

// The monotonic clock in µs, read at most once per transport callback: inside one (and all it
// calls) the first caller reads the clock and later ones get the same value (one callback's work
// takes microseconds); outside any, a fresh read. For durations and deadlines of requests; any
// thread (the cache is thread-local).
uint64_t monotonicNowUs();

class Transport {
 public:
  struct Handlers {
    void (*on_data)(void* arg) = nullptr;
    // Optional. A small read (a request or response head, a short body) that finds input()
    // empty is offered here first, straight from the thread's read buffer (borrowed for the
    // call: no evbuffer chain is allocated, filled and drained for it). Returns how many of the
    // `len` bytes it used; the rest is appended to input() (on_data is not called for them: the
    // owner stopped there and looks at input() when it goes on).
    size_t (*on_bytes)(void* arg, const char* data, size_t len) = nullptr;
    void (*on_drained)(void* arg) = nullptr;
    void (*on_event)(void* arg, short what) = nullptr;
    void* arg = nullptr;
  };
  struct Options {
    size_t read_high_watermark = 0;      // bytes; reading pauses while input() holds this much
    size_t write_low_watermark = 65536;  // bytes; on_drained fires at or below it
    uint32_t handshake_timeout_ms = 0;   // accepted sockets: TLS handshake deadline (0: none)
  };

  // An accepted socket (takes ownership of `fd`). Nothing happens before start().
  Transport(event_base* base, int fd, std::unique_ptr<TransportIo> io, const Options& options,
            const Handlers& handlers);
  // A new outgoing connection to `addr`: socket, non-blocking connect, then the Io's handshake,
  // all within `timeout_ms` (0: none). Never null; a failure arrives as on_event (ERROR or
  // TIMEOUT) from the event loop, never from inside this call.
  static std::unique_ptr<Transport> connect(event_base* base, const sockaddr* addr,
                                            socklen_t addr_len, std::unique_ptr<TransportIo> io,
                                            uint32_t timeout_ms, const Options& options,
                                            const Handlers& handlers);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Accepted sockets: starts the handshake (plain TCP: CONNECTED at once, from this call).
  void start();
  // Hands the transport to a new owner (a tunnel after an HTTP Upgrade): later callbacks go to
  // `handlers`. Safe from inside a callback of the old owner (the current one still returns to
  // the transport, which is not touched by the swap).
  void setHandlers(const Handlers& handlers) { handlers_ = handlers; }

  evbuffer* input() const { return input_; }
  // The buffer to append bytes to. Asking for it schedules the flush (see above; no evbuffer
  // callback runs on every change of the buffer). To look without writing, use outputLength().
  evbuffer* output() {
    if (!flush_scheduled_) scheduleFlush();
    return output_;
  }
  size_t outputLength() const { return evbuffer_get_length(output_); }
  int fd() const { return fd_; }
  TransportIo& io() const { return *io_; }
  bool open() const { return phase_ == Phase::kOpen; }
  const std::string& lastError() const { return error_; }

  // Reading, as the owner wants it (the handshake reads regardless).
  void enableRead();
  void disableRead();
  bool readEnabled() const { return read_enabled_; }
  // Read inactivity timeout in ms (0 = none), from now, while reading is enabled: READING|TIMEOUT
  // after that long without a readiness event, then again every `ms` while nothing arrives.
  // Setting the value in force again, or re-enabling reading, does not restart the period.
  void setReadTimeout(uint32_t ms);
  void setHighWatermark(size_t bytes) { options_.read_high_watermark = bytes; }
  // After the owner drained input(): resumes reading paused by the high watermark.
  void resumeIfDrained();

  // Clean close of the sending side: TLS close_notify (best effort), then FIN. Reading goes on.
  void shutdownWrite();
  // Makes the close send an RST instead of a FIN (SO_LINGER 0): for responses cut short.
  void resetOnClose();
  // Stops all I/O and reports nothing more (the owner is closing); the socket closes with the
  // transport.
  void stop();
  // Stops all I/O and gives the socket up: returns its fd, which the destructor then leaves
  // open (-1 when there is none). For an owner that parks an idle connection without its
  // buffers (proxy::DownstreamConnection); whatever input() and output() hold is dropped.
  int releaseFd();
  // After releaseFd(): gives the Io up as well (a parked TLS connection keeps its session with
  // its socket). The transport can only be destroyed after this.
  std::unique_ptr<TransportIo> releaseIo() { return std::move(io_); }
  // False when the peer closed an idle connection or sent bytes on it (pool reuse check).
  bool idleAndOpen() { return phase_ == Phase::kOpen && io_->idleAndOpen(fd_); }

 private:
  enum class Phase { kConnecting, kHandshaking, kOpen, kDead };

  static void onReadable(evutil_socket_t, short what, void* arg);
  static void onWritable(evutil_socket_t, short what, void* arg);
  static void onDeadline(evutil_socket_t, short, void* arg);
  static void onReadTimer(evutil_socket_t, short, void* arg);
  static void onFlush(evutil_socket_t, short, void* arg);
  class CallbackScope;  // transport.cc: runs the flushes due when a transport callback returns
  void scheduleFlush();

  void finishConnect();
  void handshake();
  void readOnce();
  // A small read into the scratch buffer, offered to Handlers::on_bytes (see there).
  void readDirect(size_t want);
  // After a read of `n` bytes that asked for `want`: the next read's size (see transport.cc).
  void noteReadSize(size_t n, size_t want);
  // What a read's status means for the owner (on_data, EOF, errors).
  void afterRead(IoStatus st);
  void flush();
  void fail(short what, std::string reason);
  void updateEvents();
  // The read timer runs (a period starts now) / stops. Lazy: see transport.cc.
  void startReadPeriod(uint32_t timeout_ms);
  void armReadTimer(uint64_t due_us, uint64_t now_us);
  void disarmReadTimer();  // the transport is dead
  void emit(short what) { handlers_.on_event(handlers_.arg, what); }

  event_base* base_;
  int fd_;
  std::unique_ptr<TransportIo> io_;
  Options options_;
  Handlers handlers_;
  evbuffer* input_;
  evbuffer* output_;
  size_t read_size_ = 16 * 1024;  // bytes the next read asks for (see kReadSize in transport.cc)
  ::event read_event_;
  ::event write_event_;
  ::event flush_event_;
  ::event deadline_event_;
  ::event read_timer_;  // the read inactivity timeout (lazily re-armed, see transport.cc)
  Phase phase_ = Phase::kHandshaking;
  std::string error_;
  uint32_t large_reads_left_ = 0;  // readOnce reserves the whole size for this many more reads
  uint32_t read_timeout_ms_ = 0;
  uint32_t period_timeout_ms_ = 0;  // the read timeout of the running period (0: none runs)
  uint64_t period_start_us_ = 0;    // monotonic µs: the last readiness event or (re)start
  uint64_t timer_due_us_ = 0;       // monotonic µs read_timer_ is armed for (0: not armed)
  bool read_enabled_ = false;
  bool read_full_ = false;         // paused by the high watermark
  bool read_wants_write_ = false;  // TLS: a read must wait for the socket to be writable
  bool write_blocked_ = false;     // the socket was full: waiting for EV_WRITE
  bool write_wants_read_ = false;  // TLS: a write must wait for the socket to be readable
  bool handshake_wants_write_ = false;
  bool read_armed_ = false;
  bool write_armed_ = false;
  bool deadline_armed_ = false;
  bool flush_scheduled_ = false;  // a flush is due (listed, or flush_event_ active)
  bool flush_listed_ = false;     // in this thread's list of flushes due (see scheduleFlush)
  Transport* next_flush_ = nullptr;
};

}  // namespace sluice::event
