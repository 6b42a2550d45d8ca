// The Transport's read inactivity timeout (lazily re-armed, transport.cc): it fires after the
// timeout without bytes and repeats, bytes restart it, a shorter timeout takes effect at once, a
// longer one is waited for in full, and none runs while reading is disabled or after
// setReadTimeout(0). Timings are asserted only as lower bounds (a timeout never fires early);
// upper bounds are generous guards against a hang.
#include "core/event/transport.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

namespace sluice::event {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

class TransportTimeoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = event_base_new();
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    peer_ = fds[1];
    Transport::Handlers h;
    h.on_data = [](void* arg) {
      auto* self = static_cast<TransportTimeoutTest*>(arg);
      self->bytes_ += evbuffer_get_length(self->transport_->input());
      evbuffer_drain(self->transport_->input(), evbuffer_get_length(self->transport_->input()));
    };
    h.on_drained = [](void*) {};
    h.on_event = [](void* arg, short what) {
      auto* self = static_cast<TransportTimeoutTest*>(arg);
      self->events_.push_back(what);
      self->event_times_.push_back(Clock::now());
      event_base_loopbreak(self->base_);
    };
    h.arg = this;
    transport_ = std::make_unique<Transport>(base_, fds[0], std::make_unique<PlainIo>(),
                                             Transport::Options{}, h);
    transport_->start();  // plain TCP: CONNECTED at once
    ASSERT_EQ(events_.size(), 1u);
    EXPECT_EQ(events_[0], BEV_EVENT_CONNECTED);
    events_.clear();
    event_times_.clear();
  }
  void TearDown() override {
    transport_.reset();
    close(peer_);
    event_base_free(base_);
  }

  // Runs the loop for `d` (or until an event arrives when `until_event`).
  void run(std::chrono::milliseconds d, bool until_event = false) {
    auto deadline = Clock::now() + d;
    while (Clock::now() < deadline) {
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
      timeval tv{static_cast<time_t>(left.count() / 1000000),
                 static_cast<suseconds_t>(left.count() % 1000000)};
      event_base_loopexit(base_, &tv);
      size_t before = events_.size();
      event_base_dispatch(base_);
      if (until_event && events_.size() > before) return;
    }
  }
  static bool isReadTimeout(short what) { return what == (BEV_EVENT_READING | BEV_EVENT_TIMEOUT); }

  event_base* base_ = nullptr;
  int peer_ = -1;
  std::unique_ptr<Transport> transport_;
  std::vector<short> events_;
  std::vector<Clock::time_point> event_times_;
  size_t bytes_ = 0;
};

TEST_F(TransportTimeoutTest, FiresAfterTheTimeoutAndRepeats) {
  auto start = Clock::now();
  transport_->setReadTimeout(100);
  transport_->enableRead();
  run(10s, true);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_TRUE(isReadTimeout(events_[0]));
  EXPECT_GE(event_times_[0] - start, 100ms);
  run(10s, true);  // nothing arrived: it fires again a timeout later
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_TRUE(isReadTimeout(events_[1]));
  EXPECT_GE(event_times_[1] - event_times_[0], 100ms);
}

TEST_F(TransportTimeoutTest, BytesRestartThePeriod) {
  transport_->setReadTimeout(300);
  transport_->enableRead();
  Clock::time_point last_write;
  for (int i = 0; i < 5; ++i) {
    last_write = Clock::now();
    ASSERT_EQ(write(peer_, "x", 1), 1);
    run(100ms);
  }
  EXPECT_EQ(bytes_, 5u);
  run(10s, true);
  ASSERT_FALSE(events_.empty());
  EXPECT_TRUE(isReadTimeout(events_.back()));
  // Counted from the last byte, not from the first setReadTimeout.
  EXPECT_GE(event_times_.back() - last_write, 300ms);
}

TEST_F(TransportTimeoutTest, AShorterTimeoutTakesEffectAtOnce) {
  transport_->setReadTimeout(60000);
  transport_->enableRead();
  run(20ms);
  auto start = Clock::now();
  transport_->setReadTimeout(100);
  run(10s, true);  // a timer left at 60 s would fail this
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_TRUE(isReadTimeout(events_[0]));
  EXPECT_GE(event_times_[0] - start, 100ms);
  EXPECT_LT(event_times_[0] - start, 10s);
}

TEST_F(TransportTimeoutTest, ALongerTimeoutIsWaitedForInFull) {
  transport_->setReadTimeout(50);
  transport_->enableRead();
  auto start = Clock::now();
  transport_->setReadTimeout(400);  // the timer armed for 50 ms fires and re-arms
  run(10s, true);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_TRUE(isReadTimeout(events_[0]));
  EXPECT_GE(event_times_[0] - start, 400ms);
}

TEST_F(TransportTimeoutTest, NoTimeoutWhileReadingIsDisabledOrAfterZero) {
  transport_->setReadTimeout(50);
  transport_->enableRead();
  transport_->disableRead();
  run(300ms);
  EXPECT_TRUE(events_.empty());
  auto start = Clock::now();
  transport_->enableRead();  // re-enabling starts a new period
  run(10s, true);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_GE(event_times_[0] - start, 50ms);
  transport_->setReadTimeout(0);
  run(300ms);
  EXPECT_EQ(events_.size(), 1u);
}

TEST_F(TransportTimeoutTest, NothingAfterStop) {
  transport_->setReadTimeout(50);
  transport_->enableRead();
  transport_->stop();
  run(300ms);
  EXPECT_TRUE(events_.empty());
}

}  // namespace
}  // namespace sluice::event
