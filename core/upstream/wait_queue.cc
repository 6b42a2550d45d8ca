#include "core/upstream/wait_queue.h"

#include <vector>

namespace sluice::upstream {

WaitQueue::WaitQueue(const std::string& cluster) : stats_(cluster) {}

WaitQueue::Push WaitQueue::push(std::shared_ptr<WaitTicket> ticket, size_t max, bool at_head) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return Push::kClosed;
  if (!at_head && entries_.size() >= max) return Push::kFull;
  if (at_head) {
    entries_.push_front(std::move(ticket));
  } else {
    entries_.push_back(std::move(ticket));
  }
  size_.store(entries_.size());
  stats_.length.inc();
  return Push::kQueued;
}

bool WaitQueue::remove(const WaitTicket* ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->get() != ticket) continue;
    entries_.erase(it);
    size_.store(entries_.size());
    stats_.length.dec();
    return true;
  }
  return false;
}

void WaitQueue::wake(size_t n) {
  if (n == 0 || size_.load() == 0) return;
  std::vector<std::shared_ptr<WaitTicket>> turns;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    while (n-- > 0 && !entries_.empty()) {
      turns.push_back(std::move(entries_.front()));
      entries_.pop_front();
      stats_.length.dec();
    }
    size_.store(entries_.size());
  }
  for (auto& t : turns) post(std::move(t), false);
}

void WaitQueue::close() {
  std::deque<std::shared_ptr<WaitTicket>> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    all.swap(entries_);
    size_.store(0);
    stats_.length.add(-static_cast<int64_t>(all.size()));
  }
  for (auto& t : all) post(std::move(t), true);
}

void WaitQueue::post(std::shared_ptr<WaitTicket> ticket, bool closed) {
  event::Worker& worker = ticket->worker();
  worker.post([self = shared_from_this(), ticket = std::move(ticket), closed] {
    self->deliver(ticket, closed);
  });
}

void WaitQueue::deliver(const std::shared_ptr<WaitTicket>& ticket, bool closed) {
  WaitTicket::Waiter* waiter = ticket->waiter_;
  if (waiter == nullptr) {
    // The request stopped waiting after its turn was posted: the turn goes to the next one.
    if (!closed) onSlotFreed();
    return;
  }
  ticket->waiter_ = nullptr;
  waiter->onQueueTurn(closed);
}

}  // namespace sluice::upstream
