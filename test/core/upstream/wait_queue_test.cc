// The cluster wait queue with two real worker threads: first in first out across workers, the
// bound, removal, turns for requests that stopped waiting passed on (never delivered to them),
// several turns at once, and closing (every waiter told, later pushes refused).
#include "core/upstream/wait_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <vector>

namespace sluice::upstream {
namespace {

using namespace std::chrono_literals;

// What waiters saw, in order, from whichever worker.
struct Log {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, bool>> turns;  // (waiter id, closed)

  void add(int id, bool closed) {
    std::lock_guard<std::mutex> lock(mu);
    turns.emplace_back(id, closed);
    cv.notify_all();
  }
  // Waits (generously) until `n` turns arrived.
  bool waitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, 10s, [&] { return turns.size() >= n; });
  }
  std::vector<std::pair<int, bool>> snapshot() {
    std::lock_guard<std::mutex> lock(mu);
    return turns;
  }
};

struct Recorder : WaitTicket::Waiter {
  Recorder(int i, Log* l) : id(i), log(l) {}
  void onQueueTurn(bool closed) override { log->add(id, closed); }
  int id;
  Log* log;
};

class WaitQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& w : workers_) w.start([] {});
    queue_ = std::make_shared<WaitQueue>("wait_queue_test");
    for (int i = 0; i < 8; ++i) recorders_.push_back(std::make_unique<Recorder>(i, &log_));
  }
  void TearDown() override {
    for (auto& w : workers_) {
      w.stop();
      w.join();
    }
  }
  // Runs `fn` on worker `w` and waits for it.
  void on(int w, std::function<void()> fn) {
    std::promise<void> done;
    workers_[w].post([&] {
      fn();
      done.set_value();
    });
    done.get_future().wait();
  }
  // A ticket for waiter `id` made on worker `w`.
  std::shared_ptr<WaitTicket> ticket(int w, int id) {
    std::shared_ptr<WaitTicket> t;
    on(w, [&] { t = std::make_shared<WaitTicket>(workers_[w], recorders_[id].get()); });
    return t;
  }

  event::Worker workers_[2] = {event::Worker(0), event::Worker(1)};
  std::shared_ptr<WaitQueue> queue_;
  std::vector<std::unique_ptr<Recorder>> recorders_;
  Log log_;
};

TEST_F(WaitQueueTest, FirstInFirstOutAcrossWorkers) {
  std::vector<std::shared_ptr<WaitTicket>> tickets;
  for (int i = 0; i < 6; ++i) {
    tickets.push_back(ticket(i % 2, i));
    ASSERT_EQ(queue_->push(tickets.back(), 100), WaitQueue::Push::kQueued);
  }
  EXPECT_EQ(queue_->size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    queue_->onSlotFreed();  // one slot at a time: each turn lands before the next is given
    ASSERT_TRUE(log_.waitFor(i + 1));
  }
  auto turns = log_.snapshot();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(turns[i], std::make_pair(i, false));
  EXPECT_TRUE(queue_->empty());
  queue_->onSlotFreed();  // nobody waits: nothing happens
}

TEST_F(WaitQueueTest, BoundedLengthButATurnThatLostItsSlotGoesBackFirst) {
  auto a = ticket(0, 0), b = ticket(1, 1), c = ticket(0, 2), d = ticket(1, 3);
  EXPECT_EQ(queue_->push(a, 2), WaitQueue::Push::kQueued);
  EXPECT_EQ(queue_->push(b, 2), WaitQueue::Push::kQueued);
  EXPECT_EQ(queue_->push(c, 2), WaitQueue::Push::kFull);
  EXPECT_EQ(queue_->push(d, 2, /*at_head=*/true), WaitQueue::Push::kQueued);
  EXPECT_EQ(queue_->size(), 3u);
  queue_->onSlotFreed();
  ASSERT_TRUE(log_.waitFor(1));
  EXPECT_EQ(log_.snapshot()[0].first, 3);
  EXPECT_EQ(queue_->push(ticket(0, 4), 0), WaitQueue::Push::kFull);  // max_queue 0: no queue
}

TEST_F(WaitQueueTest, RemovedRequestsNeverGetATurn) {
  auto a = ticket(0, 0), b = ticket(1, 1), c = ticket(0, 2);
  for (auto& t : {a, b, c}) queue_->push(t, 10);
  EXPECT_TRUE(queue_->remove(b.get()));
  EXPECT_FALSE(queue_->remove(b.get()));
  EXPECT_EQ(queue_->size(), 2u);
  queue_->wake(5);
  ASSERT_TRUE(log_.waitFor(2));
  std::this_thread::sleep_for(50ms);
  auto turns = log_.snapshot();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].first, 0);
  EXPECT_EQ(turns[1].first, 2);
}

TEST_F(WaitQueueTest, ATurnForAStaleTicketIsPassedOnNotDelivered) {
  auto a = ticket(0, 0), b = ticket(1, 1);
  queue_->push(a, 10);
  queue_->push(b, 10);
  // Waiter 0 stops waiting (timeout, client gone) but its ticket is still queued, as when its
  // turn is already on the way: the turn must reach waiter 1 instead, on the other worker.
  on(0, [&] { a->cancel(); });
  recorders_[0].reset();  // the waiter is gone: touching it would be a use after free
  queue_->onSlotFreed();
  ASSERT_TRUE(log_.waitFor(1));
  auto turns = log_.snapshot();
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].first, 1);
  EXPECT_TRUE(queue_->empty());
}

TEST_F(WaitQueueTest, ATicketGetsOneTurnOnly) {
  auto a = ticket(0, 0);
  queue_->push(a, 10);
  queue_->onSlotFreed();
  ASSERT_TRUE(log_.waitFor(1));
  // Pushed again by mistake with the spent ticket: its second turn finds no waiter (the queue
  // cleared it on delivery) and passes on to nobody.
  queue_->push(a, 10);
  queue_->onSlotFreed();
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(log_.snapshot().size(), 1u);
}

TEST_F(WaitQueueTest, CloseTellsEveryWaiterAndRefusesNewOnes) {
  auto a = ticket(0, 0), b = ticket(1, 1);
  queue_->push(a, 10);
  queue_->push(b, 10);
  queue_->close();
  ASSERT_TRUE(log_.waitFor(2));
  for (const auto& [id, closed] : log_.snapshot()) EXPECT_TRUE(closed) << id;
  EXPECT_TRUE(queue_->empty());
  EXPECT_EQ(queue_->push(ticket(0, 2), 10), WaitQueue::Push::kClosed);
}

}  // namespace
}  // namespace sluice::upstream
