#include "core/proxy/idle_parker.h"

#include <sys/time.h>

namespace sluice::proxy {

IdleParker::IdleParker(event_base* base)
    : base_(base), timer_(evtimer_new(base, &IdleParker::onTick, this)) {}

IdleParker::~IdleParker() {
  while (head_ != nullptr) remove(head_);
  if (timer_ != nullptr) event_free(timer_);
}

void IdleParker::add(Hook* hook, uint64_t now_ms) {
  if (hook->linked) remove(hook);
  hook->idle_since_ms = now_ms;
  hook->linked = true;
  hook->next = nullptr;
  hook->prev = tail_;
  if (tail_ != nullptr) {
    tail_->next = hook;
  } else {
    head_ = hook;
  }
  tail_ = hook;
  ++listed_;
  if (listed_ > kMaxUnparked && !soon_ && timer_ != nullptr) {
    // From the loop, not from here: add() runs inside another connection's callbacks.
    soon_ = true;
    if (armed_) event_del(timer_);
    armed_ = true;
    event_active(timer_, EV_TIMEOUT, 0);
    return;
  }
  arm();
}

void IdleParker::remove(Hook* hook) {
  if (!hook->linked) return;
  (hook->prev != nullptr ? hook->prev->next : head_) = hook->next;
  (hook->next != nullptr ? hook->next->prev : tail_) = hook->prev;
  hook->prev = hook->next = nullptr;
  hook->linked = false;
  --listed_;
}

void IdleParker::arm() {
  if (armed_ || timer_ == nullptr) return;
  armed_ = true;
  timeval tv{kTickMs / 1000, (kTickMs % 1000) * 1000};
  evtimer_add(timer_, &tv);
}

void IdleParker::onTick(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<IdleParker*>(arg);
  self->armed_ = false;
  self->soon_ = false;
  timeval tv{};
  event_base_gettimeofday_cached(self->base_, &tv);
  const uint64_t now_ms =
      static_cast<uint64_t>(tv.tv_sec) * 1000u + static_cast<uint64_t>(tv.tv_usec) / 1000u;
  // The oldest first: beyond kMaxUnparked whatever their age, then those idle long enough.
  // A connection that declines may list itself again (at the end, stamped now): at most once
  // per tick each, as the loop stops at the first one stamped now and under the limit.
  size_t budget = self->listed_;
  while (self->head_ != nullptr && budget-- > 0 &&
         (self->listed_ > kMaxUnparked || now_ms - self->head_->idle_since_ms >= kParkAfterMs)) {
    Hook* h = self->head_;
    self->remove(h);
    h->park(h->owner);
  }
  if (self->head_ != nullptr) self->arm();
}

}  // namespace sluice::proxy
