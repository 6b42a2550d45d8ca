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
  while (parked_head_ >= 0) release(parked_head_, Wake::kShutdown);
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

uint32_t IdleParker::ageMs(uint32_t since, uint32_t now) {
  // Wrapping difference, read as signed: a stamp "after" now counts as age 0.
  const auto age = static_cast<int32_t>(now - since);
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

void IdleParker::add(Hook* hook) {
  if (hook->idle_listed) unlink(idle_, hook);
  hook->idle_since = nowMs();
  hook->idle_listed = true;
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
  if (!hook->idle_listed) return;
  unlink(idle_, hook);
  hook->idle_listed = false;
}

IdleParker::Record* IdleParker::record(int fd) {
  if (fd < 0) return nullptr;
  const auto page = static_cast<size_t>(fd) >> kPageBits;
  if (page >= pages_.size() || pages_[page] == nullptr) return nullptr;
  Record* r = &pages_[page]->records[static_cast<size_t>(fd) & (kPageRecords - 1)];
  return r->used != 0 ? r : nullptr;
}

int IdleParker::ownerIndex(const Owner& owner) {
  int free_entry = -1;
  for (size_t i = 0; i < owners_.size(); ++i) {
    const Owner& o = owners_[i].owner;
    if (owners_[i].refs == 0) {
      if (free_entry < 0) free_entry = static_cast<int>(i);
    } else if (o.slot == owner.slot && o.stats == owner.stats &&
               o.idle_timeout_ms == owner.idle_timeout_ms) {
      return static_cast<int>(i);
    }
  }
  if (free_entry >= 0) {
    owners_[static_cast<size_t>(free_entry)].owner = owner;
    return free_entry;
  }
  if (owners_.size() > UINT16_MAX) return -1;
  owners_.push_back(OwnerEntry{owner, 0});
  return static_cast<int>(owners_.size() - 1);
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
  if (self->idle_.head != nullptr || self->parked_head_ >= 0) self->arm();
}

void IdleParker::tick() {
  const uint32_t now = nowMs();
  // Parked connections past their idle timeout end (each is woken at most once).
  for (int32_t fd = parked_head_; fd >= 0;) {
    Record* r = record(fd);
    const int32_t next = r->next;
    if (ageMs(r->idle_since, now) >= owners_[r->owner].owner.idle_timeout_ms) {
      release(fd, Wake::kTimedOut);
    }
    fd = next;
  }
  if (epoll_fd_ < 0) return;
  // The oldest idle first: those idle for kParkAfterMs, and beyond kMaxUnparked those idle
  // for kBusyTickMs. One that declines may list itself again (at the end, stamped now): the
  // budget looks at each at most once per tick.
  size_t budget = idle_.count;
  while (idle_.head != nullptr && budget-- > 0 &&
         (ageMs(idle_.head->idle_since, now) >= kParkAfterMs ||
          (idle_.count > kMaxUnparked && ageMs(idle_.head->idle_since, now) >= kBusyTickMs))) {
    parkOne(idle_.head);
  }
}

void IdleParker::parkOne(Hook* hook) {
  const uint32_t since = hook->idle_since;
  remove(hook);
  Owner owner;
  std::shared_ptr<void> kept;
  const int fd = callbacks_.park(callbacks_.arg, hook, &owner, &kept);  // `hook` is gone
  if (fd < 0) return;
  const int index = fd < kMaxFd ? ownerIndex(owner) : -1;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = fd;
  if (index < 0 || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    // Cannot keep it: rebuilt at once.
    callbacks_.wake(callbacks_.arg, fd, owner, std::move(kept), Wake::kReadable);
    return;
  }
  const auto page = static_cast<size_t>(fd) >> kPageBits;
  if (page >= pages_.size()) pages_.resize(page + 1);
  if (pages_[page] == nullptr) pages_[page] = std::make_unique<Page>();  // zeroed
  Page& p = *pages_[page];
  Record& r = p.records[static_cast<size_t>(fd) & (kPageRecords - 1)];
  ++p.count;
  ++owners_[static_cast<size_t>(index)].refs;
  r.used = kept != nullptr ? 2 : 1;
  if (kept != nullptr) kept_[fd] = std::move(kept);
  r.owner = static_cast<uint16_t>(index);
  r.idle_since = since;
  r.next = -1;
  r.prev = parked_tail_;
  if (parked_tail_ >= 0) {
    record(parked_tail_)->next = fd;
  } else {
    parked_head_ = fd;
  }
  parked_tail_ = fd;
  ++parked_count_;
}

void IdleParker::release(int fd, Wake why) {
  Record* r = record(fd);
  if (r == nullptr) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  (r->prev >= 0 ? record(r->prev)->next : parked_head_) = r->next;
  (r->next >= 0 ? record(r->next)->prev : parked_tail_) = r->prev;
  --parked_count_;
  OwnerEntry& entry = owners_[r->owner];
  Owner owner = entry.owner;
  if (--entry.refs == 0) entry.owner = Owner();  // the slot and stats are not held for nothing
  std::shared_ptr<void> kept;
  if (r->used == 2) {
    auto it = kept_.find(fd);
    kept = std::move(it->second);
    kept_.erase(it);
  }
  *r = Record{};
  const auto page = static_cast<size_t>(fd) >> kPageBits;
  if (--pages_[page]->count == 0) pages_[page].reset();
  callbacks_.wake(callbacks_.arg, fd, owner, std::move(kept), why);
}

void IdleParker::wakeAll(const ListenerSlot* slot) {
  for (int32_t fd = parked_head_; fd >= 0;) {
    Record* r = record(fd);
    const int32_t next = r->next;
    if (slot == nullptr || owners_[r->owner].owner.slot.get() == slot) release(fd, Wake::kDrain);
    fd = next;
  }
}

void IdleParker::onReadable(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<IdleParker*>(arg);
  epoll_event events[64];
  int n = epoll_wait(self->epoll_fd_, events, 64, 0);
  for (int i = 0; i < n; ++i) {
    // Still parked? Sockets leave the set (EPOLL_CTL_DEL) before their record is freed, and a
    // wake in this batch parks nothing, so a record found here is this socket's.
    if (self->record(events[i].data.fd) == nullptr) continue;
    self->release(events[i].data.fd, Wake::kReadable);
  }
}

}  // namespace sluice::proxy
