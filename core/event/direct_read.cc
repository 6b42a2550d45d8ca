#include "core/event/direct_read.h"

#include <sys/uio.h>

#include <cerrno>

namespace sluice::event {
namespace {

constexpr size_t kReadSize = 16 * 1024;

}  // namespace

DirectRead::DirectRead(bufferevent* bev, size_t high_watermark, DataHandler on_data,
                       EventHandler on_event, void* arg)
    : bev_(bev),
      high_watermark_(high_watermark),
      on_data_(on_data),
      on_event_(on_event),
      arg_(arg) {
  bufferevent_disable(bev_, EV_READ);
  event_assign(&event_, bufferevent_get_base(bev_), bufferevent_getfd(bev_), EV_READ | EV_PERSIST,
               &DirectRead::onReadable, this);
}

DirectRead::~DirectRead() { event_del(&event_); }

void DirectRead::arm() {
  if (!enabled_ || full_) {
    event_del(&event_);
    return;
  }
  if (timeout_ms_ == 0) {
    event_add(&event_, nullptr);
  } else {
    timeval tv{static_cast<time_t>(timeout_ms_ / 1000),
               static_cast<suseconds_t>((timeout_ms_ % 1000) * 1000)};
    event_add(&event_, &tv);
  }
}

void DirectRead::enable() {
  if (enabled_) return;
  enabled_ = true;
  arm();
}

void DirectRead::disable() {
  if (!enabled_) return;
  enabled_ = false;
  event_del(&event_);
}

void DirectRead::setTimeout(uint32_t ms) {
  if (ms == timeout_ms_) return;
  timeout_ms_ = ms;
  if (enabled_ && !full_) arm();
}

void DirectRead::resumeIfDrained() {
  if (!full_) return;
  if (high_watermark_ != 0 && evbuffer_get_length(bufferevent_get_input(bev_)) >= high_watermark_) {
    return;
  }
  full_ = false;
  arm();
}

void DirectRead::onReadable(evutil_socket_t fd, short what, void* arg) {
  auto* self = static_cast<DirectRead*>(arg);
  if ((what & EV_TIMEOUT) != 0) {
    self->on_event_(self->arg_, BEV_EVENT_READING | BEV_EVENT_TIMEOUT);
    return;
  }
  evbuffer* in = bufferevent_get_input(self->bev_);
  size_t want = kReadSize;
  if (self->high_watermark_ != 0) {
    size_t have = evbuffer_get_length(in);
    if (have >= self->high_watermark_) {
      self->full_ = true;
      event_del(&self->event_);
      return;
    }
    if (self->high_watermark_ - have < want) want = self->high_watermark_ - have;
  }
  // The bufferevent keeps the end of its input frozen (only it may add): unfreeze around ours.
  evbuffer_unfreeze(in, 0);
  evbuffer_iovec vec[2];
  int n_vec = evbuffer_reserve_space(in, static_cast<ev_ssize_t>(want), vec, 2);
  ssize_t n = -1;
  if (n_vec > 0) {
    iovec iov[2];
    for (int i = 0; i < n_vec; ++i) {
      iov[i].iov_base = vec[i].iov_base;
      iov[i].iov_len = vec[i].iov_len;
    }
    size_t total = 0;
    for (int i = 0; i < n_vec; ++i) total += iov[i].iov_len;
    if (total > want) {  // reserve may hand out more than asked: read no more than allowed
      size_t left = want;
      for (int i = 0; i < n_vec; ++i) {
        if (iov[i].iov_len > left) iov[i].iov_len = left;
        left -= iov[i].iov_len;
      }
    }
    n = readv(fd, iov, n_vec);
    if (n > 0) {
      size_t left = static_cast<size_t>(n);
      int used = 0;
      for (int i = 0; i < n_vec && left > 0; ++i) {
        size_t take = vec[i].iov_len < left ? vec[i].iov_len : left;
        vec[i].iov_len = take;
        left -= take;
        used = i + 1;
      }
      evbuffer_commit_space(in, vec, used);
    } else {
      evbuffer_commit_space(in, vec, 0);
    }
  }
  int err = errno;
  evbuffer_freeze(in, 0);
  if (n > 0) {
    self->on_data_(self->arg_);
  } else if (n == 0) {
    self->on_event_(self->arg_, BEV_EVENT_READING | BEV_EVENT_EOF);
  } else if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR) {
    errno = err;
    self->on_event_(self->arg_, BEV_EVENT_READING | BEV_EVENT_ERROR);
  }
}

}  // namespace sluice::event
