#include "core/event/direct_write.h"

#include <event2/buffer.h>

#include <cerrno>

namespace sluice::event {

DirectWrite::DirectWrite(bufferevent* bev, size_t low_watermark, Callback drained, Callback failed,
                         void* arg)
    : bev_(bev), low_watermark_(low_watermark), drained_(drained), failed_(failed), arg_(arg) {
  event_assign(&flush_event_, bufferevent_get_base(bev), -1, 0, &DirectWrite::onFlush, this);
}

DirectWrite::~DirectWrite() {
  event_del(&flush_event_);
  if (cb_ != nullptr) evbuffer_remove_cb_entry(bufferevent_get_output(bev_), cb_);
}

void DirectWrite::start() {
  if (started_) return;
  started_ = true;
  bufferevent_disable(bev_, EV_WRITE);
  cb_ = evbuffer_add_cb(bufferevent_get_output(bev_), &DirectWrite::onAdded, this);
  if (evbuffer_get_length(bufferevent_get_output(bev_)) > 0) event_active(&flush_event_, 0, 0);
}

void DirectWrite::onAdded(evbuffer*, const evbuffer_cb_info* info, void* arg) {
  auto* self = static_cast<DirectWrite*>(arg);
  if (info->n_added == 0 || self->libevent_writing_) return;
  event_active(&self->flush_event_, 0, 0);  // once, at the end of this loop turn: one writev
}

void DirectWrite::onFlush(evutil_socket_t, short, void* arg) {
  static_cast<DirectWrite*>(arg)->flush();
}

void DirectWrite::flush() {
  evbuffer* out = bufferevent_get_output(bev_);
  if (libevent_writing_ || evbuffer_get_length(out) == 0) return;
  // A bufferevent keeps the front of its output frozen (only it may drain it); do as its own
  // write callback does: unfreeze for the write, freeze again.
  evbuffer_unfreeze(out, 1);
  errno = 0;
  int n = evbuffer_write(out, bufferevent_getfd(bev_));
  evbuffer_freeze(out, 1);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    failed_(arg_);
    return;
  }
  if (evbuffer_get_length(out) > 0) {
    libevent_writing_ = true;  // the socket is full: let EV_WRITE tell us when it drains
    bufferevent_enable(bev_, EV_WRITE);
  }
  if (evbuffer_get_length(out) <= low_watermark_) drained_(arg_);
}

void DirectWrite::onBufferEventWrote() {
  if (!started_ || evbuffer_get_length(bufferevent_get_output(bev_)) > 0) return;
  libevent_writing_ = false;
  bufferevent_disable(bev_, EV_WRITE);
}

}  // namespace sluice::event
