// The Transport: its write path (output() schedules the flush), its read path (small
// reservations and a scratch buffer, transport.cc readOnce) and its read inactivity timeout (lazily
// re-armed): it fires after the timeout without bytes and repeats, bytes restart it, a shorter
// timeout takes effect at once, a longer one is waited for in full, and none runs while reading is
// disabled, after setReadTimeout(0) or after stop(). Timings are asserted only as lower bounds (a
// timeout never fires early); upper bounds are generous guards against a hang.
#include "core/event/transport.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

namespace sluice::event {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = event_base_new();
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    peer_ = fds[1];
    Transport::Handlers h;
    h.on_data = [](void* arg) {
      auto* self = static_cast<TransportTest*>(arg);
      evbuffer* in = self->transport_->input();
      size_t n = evbuffer_get_length(in);
      self->bytes_ += n;
      std::string chunk(n, '\0');
      evbuffer_remove(in, chunk.data(), n);
      self->received_ += chunk;
      if (self->echo_) evbuffer_add(self->transport_->output(), chunk.data(), n);
    };
    h.on_drained = [](void*) {};
    h.on_event = [](void* arg, short what) {
      auto* self = static_cast<TransportTest*>(arg);
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
  std::string received_;
  bool echo_ = false;  // on_data appends what it read to output()
};

TEST_F(TransportTest, FiresAfterTheTimeoutAndRepeats) {
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

TEST_F(TransportTest, BytesRestartThePeriod) {
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

TEST_F(TransportTest, AShorterTimeoutTakesEffectAtOnce) {
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

TEST_F(TransportTest, ALongerTimeoutIsWaitedForInFull) {
  transport_->setReadTimeout(50);
  transport_->enableRead();
  auto start = Clock::now();
  transport_->setReadTimeout(400);  // the timer armed for 50 ms fires and re-arms
  run(10s, true);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_TRUE(isReadTimeout(events_[0]));
  EXPECT_GE(event_times_[0] - start, 400ms);
}

TEST_F(TransportTest, NoTimeoutWhileReadingIsDisabledOrAfterZero) {
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

// Reads go into a small reservation plus a scratch buffer while they stay small, and into a
// whole-size reservation after a large one (transport.cc, readOnce): bytes of every size, and
// alternating sizes, arrive complete and in order.
TEST_F(TransportTest, ReadsOfEverySizeArriveIntact) {
  transport_->enableRead();
  std::string sent;
  const size_t sizes[] = {1,  500, 959, 960, 961, 1500, 16384, 40000, 3,  70000, 10,
                          10, 10,  10,  10,  10,  10,   10,    10,    10, 2000,  5};
  for (size_t size : sizes) {
    std::string part(size, '\0');
    for (size_t i = 0; i < size; ++i) part[i] = static_cast<char>('a' + (sent.size() + i) % 26);
    size_t off = 0;
    while (off < part.size()) {
      ssize_t w = write(peer_, part.data() + off, part.size() - off);
      if (w > 0) off += static_cast<size_t>(w);
      run(5ms);  // the socket pair holds less than 70000 bytes: let the transport read
    }
    sent += part;
    auto deadline = Clock::now() + 10s;
    while (received_.size() < sent.size() && Clock::now() < deadline) run(5ms);
    ASSERT_EQ(received_.size(), sent.size()) << "after a write of " << size;
  }
  EXPECT_EQ(received_, sent);
}

// Handlers::on_bytes: small reads with nothing buffered are offered straight from the read
// buffer; what the owner leaves goes into input() (read with the next bytes, through on_data),
// so every byte arrives once and in order whether it was taken from an offer or from input().
TEST_F(TransportTest, BytesLeftFromADirectOfferWaitInInput) {
  using Self = std::remove_pointer_t<decltype(this)>;  // the lambdas reach protected members
  static size_t offers;
  offers = 0;
  Transport::Handlers h;
  h.on_data = [](void* arg) {
    auto* self = static_cast<Self*>(arg);
    evbuffer* in = self->transport_->input();
    std::string chunk(evbuffer_get_length(in), '\0');
    evbuffer_remove(in, chunk.data(), chunk.size());
    self->received_ += chunk;
  };
  h.on_bytes = [](void* arg, const char* data, size_t len) -> size_t {
    auto* self = static_cast<Self*>(arg);
    ++offers;
    EXPECT_EQ(evbuffer_get_length(self->transport_->input()), 0u);
    size_t take = len > 3 ? len - 3 : len / 2;  // leaves a few bytes (or half of a short read)
    self->received_.append(data, take);
    return take;
  };
  h.on_drained = [](void*) {};
  h.on_event = [](void* arg, short) { event_base_loopbreak(static_cast<Self*>(arg)->base_); };
  h.arg = this;
  transport_->setHandlers(h);
  transport_->enableRead();
  std::string sent;
  for (size_t size : {10, 1, 2, 500, 5, 900, 7, 3, 40}) {
    std::string part(size, '\0');
    for (size_t i = 0; i < size; ++i) part[i] = static_cast<char>('a' + (sent.size() + i) % 26);
    ASSERT_EQ(write(peer_, part.data(), part.size()), static_cast<ssize_t>(part.size()));
    sent += part;
    // Everything but what the last offer left is there (that waits for the next read).
    auto deadline = Clock::now() + 10s;
    while (received_.size() + evbuffer_get_length(transport_->input()) < sent.size() &&
           Clock::now() < deadline) {
      run(5ms);
    }
    ASSERT_EQ(received_.size() + evbuffer_get_length(transport_->input()), sent.size());
  }
  std::string rest(evbuffer_get_length(transport_->input()), '\0');
  evbuffer_remove(transport_->input(), rest.data(), rest.size());
  EXPECT_EQ(received_ + rest, sent);
  EXPECT_GT(offers, 0u);
}

// Appending to output() is all it takes: the bytes go out at the end of the loop turn, however
// many appends there were, and again after the next append.
TEST_F(TransportTest, BytesAppendedToOutputGoOut) {
  evbuffer_add(transport_->output(), "abc", 3);
  evbuffer_add(transport_->output(), "def", 3);
  EXPECT_EQ(transport_->outputLength(), 6u);
  auto readPeer = [&](size_t want) {
    std::string got;
    auto deadline = Clock::now() + 10s;
    while (got.size() < want && Clock::now() < deadline) {
      run(5ms);
      char buf[64];
      ssize_t r = read(peer_, buf, sizeof(buf));
      if (r > 0) got.append(buf, static_cast<size_t>(r));
    }
    return got;
  };
  EXPECT_EQ(readPeer(6), "abcdef");
  EXPECT_EQ(transport_->outputLength(), 0u);
  evbuffer_add(transport_->output(), "ghi", 3);
  EXPECT_EQ(readPeer(3), "ghi");
}

// Output appended inside a transport callback goes out when the callback returns.
TEST_F(TransportTest, OutputAppendedInsideACallbackGoesOut) {
  echo_ = true;
  transport_->enableRead();
  std::string got;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(write(peer_, "ping", 4), 4);
    auto deadline = Clock::now() + 10s;
    while (got.size() < 4u * (i + 1) && Clock::now() < deadline) {
      run(5ms);
      char buf[64];
      ssize_t r = read(peer_, buf, sizeof(buf));
      if (r > 0) got.append(buf, static_cast<size_t>(r));
    }
  }
  EXPECT_EQ(got, "pingpingping");
}

TEST_F(TransportTest, NothingAfterStop) {
  transport_->setReadTimeout(50);
  transport_->enableRead();
  transport_->stop();
  run(300ms);
  EXPECT_TRUE(events_.empty());
}

}  // namespace
}  // namespace sluice::event
