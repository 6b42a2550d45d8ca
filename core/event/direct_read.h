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
  // `on_data(arg)` runs when bytes were appended to the input. `on_event(arg, what)` gets what a
  // bufferevent event callback would: BEV_EVENT_READING | EOF, ERROR or TIMEOUT — so an owner
  // passes the handler it already has for its bufferevent.
  using DataHandler = void (*)(void* arg);
  using EventHandler = void (*)(void* arg, short what);

  // `high_watermark` (bytes, 0 = none): reading pauses while the input holds that much, and
  // resumes when the owner calls resumeIfDrained() after consuming.
  DirectRead(bufferevent* bev, size_t high_watermark, DataHandler on_data, EventHandler on_event,
             void* arg);
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
  DataHandler on_data_;
  EventHandler on_event_;
  void* arg_;
  ::event event_;
  uint32_t timeout_ms_ = 0;
  bool enabled_ = false;
  bool full_ = false;  // paused by the high watermark
};

}  // namespace sluice::event
