#include "core/proxy/idle_parker.h"

#include <sys/epoll.h>
#include <sys/time.h>

#include <unistd.h>
#include <ctime>

namespace sluice::proxy {

IdleParker::IdleParker(event_base* base, const Callbacks& callbacks)
    : base_(base),
      callbacks_(callbacks),
      epoll_fd_(epoll_create1(EPOLL_CLOEXEC)),
      readable_(epoll_fd_ >= 0 ? event_new(base, epoll_fd_, EV_READ | EV_PERSIST,
                                           &IdleParker::onReadable, this)
                               : nullptr),
      timer_(evtimer_new(base, &IdleParker::onTick, this)) {
  if (readable_ != nullptr) event_add(readable_, nullptr);
}

IdleParker::~IdleParker() {
  while (idle_.head != nullptr) remove(idle_.head);
  while (parked_.head != nullptr) remove(parked_.head);
  if (readable_ != nullptr) event_free(readable_);
  if (timer_ != nullptr) event_free(timer_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

uint32_t IdleParker::nowMs() const {
  // Monotonic, not the loop's cached wall clock: libevent re-derives that from the monotonic
  // clock plus an offset it refreshes every few seconds, so it can step back a little, and a
  // stamp taken just before such a step looked 49 days old to the next tick (measured: 2,677 of
  // 5,000 parked connections closed as timed out within seconds). The coarse clock is read
  // from the vDSO, without a system call; its few-ms resolution is plenty here.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint32_t>(static_cast<uint64_t>(ts.tv_sec) * 1000u +
                               static_cast<uint64_t>(ts.tv_nsec) / 1000000u);
}

uint32_t IdleParker::ageMs(const Hook* hook, uint32_t now) {
  // Wrapping difference, read as signed: a stamp "after" now counts as age 0.
  const auto age = static_cast<int32_t>(now - hook->idle_since);
  return age > 0 ? static_cast<uint32_t>(age) : 0;
}

void IdleParker::append(List& list, Hook* hook) {
  hook->idle_next = nullptr;
  hook->idle_prev = list.tail;
  (list.tail != nullptr ? list.tail->idle_next : list.head) = hook;
  list.tail = hook;
  ++list.count;
}

void IdleParker::unlink(List& list, Hook* hook) {
  (hook->idle_prev != nullptr ? hook->idle_prev->idle_next : list.head) = hook->idle_next;
  (hook->idle_next != nullptr ? hook->idle_next->idle_prev : list.tail) = hook->idle_prev;
  hook->idle_prev = hook->idle_next = nullptr;
  --list.count;
}

void IdleParker::add(Hook* hook, uint32_t idle_timeout_ms) {
  if (hook->idle_list == 2) return;  // parked: never (see the header)
  if (hook->idle_list == 1) unlink(idle_, hook);
  hook->idle_since = nowMs();
  hook->idle_timeout_ms = idle_timeout_ms;
  hook->idle_list = 1;
  append(idle_, hook);
  if (idle_.count > kMaxUnparked && !soon_ && timer_ != nullptr && epoll_fd_ >= 0) {
    // From the loop, not from here: add() runs inside another connection's callbacks.
    soon_ = true;
    armed_ = true;
    timeval tv{0, kBusyTickMs * 1000};
    evtimer_add(timer_, &tv);  // replaces a later deadline
    return;
  }
  arm();
}

void IdleParker::remove(Hook* hook) {
  if (hook->idle_list == 1) {
    unlink(idle_, hook);
  } else if (hook->idle_list == 2) {
    unlink(parked_, hook);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, hook->parked_fd, nullptr);  // the fd stays the owner's
  }
  hook->idle_list = 0;
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
  self->tick();
  if (self->idle_.count > kMaxUnparked && self->epoll_fd_ >= 0) {
    // Still over the limit (the oldest beyond it idle for less than kBusyTickMs): look again
    // then, not a whole tick later.
    self->soon_ = true;
    self->armed_ = true;
    timeval tv{0, kBusyTickMs * 1000};
    evtimer_add(self->timer_, &tv);
    return;
  }
  if (self->idle_.head != nullptr || self->parked_.head != nullptr) self->arm();
}

void IdleParker::tick() {
  const uint32_t now = nowMs();
  // Parked connections past their idle timeout end (each is woken at most once).
  for (Hook* h = parked_.head; h != nullptr;) {
    Hook* next = h->idle_next;
    if (ageMs(h, now) >= h->idle_timeout_ms) {
      remove(h);
      callbacks_.wake(h, true);
    }
    h = next;
  }
  if (epoll_fd_ < 0) return;
  // The oldest idle first: those idle for kParkAfterMs, and beyond kMaxUnparked those idle
  // for kBusyTickMs. One that declines may list itself again (at the end, stamped now): the budget
  // looks at each at most once per tick.
  size_t budget = idle_.count;
  while (idle_.head != nullptr && budget-- > 0 &&
         (ageMs(idle_.head, now) >= kParkAfterMs ||
          (idle_.count > kMaxUnparked && ageMs(idle_.head, now) >= kBusyTickMs))) {
    Hook* h = idle_.head;
    unlink(idle_, h);
    h->idle_list = 0;
    int fd = callbacks_.park(h);
    if (fd < 0) continue;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.ptr = h;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      callbacks_.wake(h, false);  // cannot watch it: unpark at once
      continue;
    }
    h->idle_list = 2;
    append(parked_, h);
  }
}

void IdleParker::onReadable(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<IdleParker*>(arg);
  epoll_event events[64];
  int n = epoll_wait(self->epoll_fd_, events, 64, 0);
  for (int i = 0; i < n; ++i) {
    auto* h = static_cast<Hook*>(events[i].data.ptr);
    // Still parked? An earlier wake in this batch cannot close another connection, but a
    // connection closed meanwhile is only deleted after this callback, so the check is safe.
    if (h->idle_list != 2) continue;
    self->remove(h);
    self->callbacks_.wake(h, false);
  }
}

}  // namespace sluice::proxy
