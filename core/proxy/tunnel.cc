#include "core/proxy/tunnel.h"

#include <event2/buffer.h>

#include "core/event/timeval.h"
#include "core/proxy/stream_internal.h"

namespace sluice::proxy {
namespace {

using internal::kHighWatermark;
using internal::kLowWatermark;

}  // namespace

Tunnel::Tunnel(event::Worker& worker, std::unique_ptr<event::Transport> downstream,
               std::unique_ptr<event::Transport> upstream, const Options& options,
               const Callbacks& callbacks)
    : worker_(worker), options_(options), callbacks_(callbacks) {
  down_.tunnel = this;
  down_.peer = &up_;
  down_.transport = std::move(downstream);
  up_.tunnel = this;
  up_.peer = &down_;
  up_.transport = std::move(upstream);
  evtimer_assign(&idle_timer_, worker_.base(), &Tunnel::onIdleTimer, this);
}

Tunnel::~Tunnel() {
  event_del(&idle_timer_);
  if (started_ && !ended_) options_.stats->tunnels_active.dec();
}

void Tunnel::start() {
  if (started_) return;
  started_ = true;
  options_.stats->tunnels_total.inc();
  options_.stats->tunnels_active.inc();
  for (Side* side : {&down_, &up_}) {
    event::Transport::Handlers h;
    h.on_data = &Tunnel::onData;
    h.on_drained = &Tunnel::onDrained;
    h.on_event = &Tunnel::onEvent;
    h.arg = side;
    side->transport->setHandlers(h);
    side->transport->setReadTimeout(0);  // the tunnel's idle timer replaces the HTTP timeouts
  }
  touch();
  if (options_.idle_timeout_ms > 0) {
    timeval tv = event::toTimeval(options_.idle_timeout_ms);
    evtimer_add(&idle_timer_, &tv);
  }
  // Bytes that came with the heads: the client's first frames, the upstream's first frames.
  pump(down_);
  pump(up_);
  if (options_.downstream_ended) endRead(down_);
  if (ended_) return;
  if (options_.upstream_ended) endRead(up_);
  if (ended_) return;
  for (Side* side : {&down_, &up_}) {
    if (!side->read_ended && !side->paused) side->transport->enableRead();
  }
}

void Tunnel::touch() { last_activity_ms_ = nowMs(); }

uint64_t Tunnel::nowMs() const {
  timeval tv{};
  event_base_gettimeofday_cached(worker_.base(), &tv);
  return static_cast<uint64_t>(tv.tv_sec) * 1000u + static_cast<uint64_t>(tv.tv_usec) / 1000u;
}

void Tunnel::pump(Side& from) {
  evbuffer* in = from.transport->input();
  size_t n = evbuffer_get_length(in);
  if (n > 0) {
    from.bytes_read += n;
    evbuffer_add_buffer(from.peer->transport->output(), in);  // flushed at the end of the turn
    touch();
  }
  if (!from.paused && !from.read_ended && from.peer->transport->outputLength() > kHighWatermark) {
    from.paused = true;
    from.transport->disableRead();
  }
  from.transport->resumeIfDrained();
}

void Tunnel::endRead(Side& from) {
  if (from.read_ended) return;
  from.read_ended = true;
  from.transport->disableRead();
  shutIfFlushed(*from.peer);
  finishIfDone();
}

void Tunnel::shutIfFlushed(Side& to) {
  if (to.write_shut || !to.peer->read_ended) return;
  if (to.transport->outputLength() > 0) return;  // onDrained tries again
  to.write_shut = true;
  to.transport->shutdownWrite();
}

void Tunnel::finishIfDone() {
  if (down_.read_ended && up_.read_ended && down_.write_shut && up_.write_shut) {
    finish(End::kClosed);
  }
}

void Tunnel::close(End why) { finish(why); }

void Tunnel::finish(End why) {
  if (ended_) return;
  ended_ = true;
  event_del(&idle_timer_);
  down_.transport->stop();
  up_.transport->stop();
  if (started_) options_.stats->tunnels_active.dec();
  Result r;
  r.bytes_from_downstream = down_.bytes_read;
  r.bytes_from_upstream = up_.bytes_read;
  r.end = why;
  if (callbacks_.on_done != nullptr) callbacks_.on_done(callbacks_.arg, r);  // may delete us later
}

void Tunnel::onData(void* arg) {
  auto* side = static_cast<Side*>(arg);
  if (side->tunnel->ended_) return;
  side->tunnel->pump(*side);
}

void Tunnel::onDrained(void* arg) {
  auto* to = static_cast<Side*>(arg);
  Tunnel* self = to->tunnel;
  if (self->ended_) return;
  Side& from = *to->peer;
  size_t left = to->transport->outputLength();
  if (from.paused && left <= kLowWatermark) {
    from.paused = false;
    if (!from.read_ended) from.transport->enableRead();
  }
  if (left == 0) {
    self->shutIfFlushed(*to);
    self->finishIfDone();
  }
}

void Tunnel::onEvent(void* arg, short what) {
  auto* side = static_cast<Side*>(arg);
  Tunnel* self = side->tunnel;
  if (self->ended_ || (what & BEV_EVENT_CONNECTED) != 0) return;
  const bool downstream = side == &self->down_;
  if ((what & BEV_EVENT_EOF) != 0 && (what & BEV_EVENT_ERROR) == 0) {
    self->pump(*side);  // anything read with the FIN (nothing, normally)
    self->endRead(*side);
    return;
  }
  if ((what & BEV_EVENT_TIMEOUT) != 0 && (what & BEV_EVENT_ERROR) == 0) {
    self->finish(End::kIdleTimeout);  // no read timeout is set; treated as idle regardless
    return;
  }
  self->finish(downstream ? End::kDownstreamError : End::kUpstreamError);
}

void Tunnel::onIdleTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Tunnel*>(arg);
  if (self->ended_) return;
  uint64_t idle = self->nowMs() - self->last_activity_ms_;
  if (idle >= self->options_.idle_timeout_ms) {
    self->finish(End::kIdleTimeout);
    return;
  }
  timeval tv = event::toTimeval(self->options_.idle_timeout_ms - idle);
  evtimer_add(&self->idle_timer_, &tv);
}

}  // namespace sluice::proxy
