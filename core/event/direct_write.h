// Writes a bufferevent's output straight to its socket, once per event-loop turn, instead of
// through libevent's EV_WRITE round trip (epoll_ctl to add the write event, wait, write,
// epoll_ctl to remove it: two extra system calls per response per connection). Bytes appended
// during a callback are collected and sent with one writev at the end of the loop turn; only
// when the socket cannot take them all does EV_WRITE get enabled, and it is disabled again once
// the output drained. Worker thread only (the bufferevent's).
#pragma once

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>

namespace sluice::event {

class DirectWrite {
 public:
  // `drained` is called (with `arg`) whenever a direct write left the output at or below
  // `low_watermark` bytes — the same moment a bufferevent write callback would fire.
  // `failed` is called when the socket refused the write (peer reset, broken pipe).
  using Callback = void (*)(void* arg);
  DirectWrite(bufferevent* bev, size_t low_watermark, Callback drained, Callback failed, void* arg);
  ~DirectWrite();
  DirectWrite(const DirectWrite&) = delete;
  DirectWrite& operator=(const DirectWrite&) = delete;

  // Takes over writing (call once the socket is connected). Until then libevent writes.
  void start();
  // Called from the bufferevent's write callback: gives writing back to direct mode when empty.
  void onBufferEventWrote();
  bool started() const { return started_; }

 private:
  static void onAdded(evbuffer* buf, const evbuffer_cb_info* info, void* arg);
  static void onFlush(evutil_socket_t, short, void* arg);
  void flush();

  bufferevent* bev_;
  size_t low_watermark_;
  Callback drained_;
  Callback failed_;
  void* arg_;
  evbuffer_cb_entry* cb_ = nullptr;
  ::event flush_event_;
  bool started_ = false;
  bool libevent_writing_ = false;  // EV_WRITE enabled after a partial write
};

}  // namespace sluice::event
