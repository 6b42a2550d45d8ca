// Reads a bufferevent's socket into its input buffer with one readv per readiness event,
// instead of libevent's evbuffer_read, which asks the kernel how much is readable
// (ioctl FIONREAD) before every read: one system call less per read. The bufferevent's own
// EV_READ stays disabled; this class owns reading, the read timeout and the read high
// watermark. Worker thread only (the bufferevent's).
#pragma once

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include <cstdint>

namespace sluice::event {

class DirectRead {
 public:
  // What happened; passed to `handler` together with `arg`.
  enum class Event { kData, kEof, kError, kTimeout };
  using Handler = void (*)(void* arg, Event what);

  // `high_watermark` (bytes, 0 = none): reading pauses while the input holds that much, and
  // resumes when the owner calls resumeIfDrained() after consuming.
  DirectRead(bufferevent* bev, size_t high_watermark, Handler handler, void* arg);
  ~DirectRead();
  DirectRead(const DirectRead&) = delete;
  DirectRead& operator=(const DirectRead&) = delete;

  void enable();
  void disable();
  bool enabled() const { return enabled_; }
  // Read inactivity timeout in ms (0 = none); applies from now while enabled.
  void setTimeout(uint32_t ms);
  void setHighWatermark(size_t bytes) { high_watermark_ = bytes; }
  // After the owner drained input: re-arms reading paused by the high watermark.
  void resumeIfDrained();

 private:
  static void onReadable(evutil_socket_t fd, short what, void* arg);
  void arm();

  bufferevent* bev_;
  size_t high_watermark_;
  Handler handler_;
  void* arg_;
  ::event event_;
  uint32_t timeout_ms_ = 0;
  bool enabled_ = false;
  bool full_ = false;  // paused by the high watermark
};

}  // namespace sluice::event
