// MemoryTrim (a trim once a burst of connections has closed, never in steady traffic) and
// IdleParker (parks after kParkAfterMs, wakes on a readable socket, ends at the idle timeout,
// parks early beyond kMaxUnparked) on a real event loop, with socketpairs as connections.
#include <event2/event.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "core/proxy/idle_parker.h"
#include "core/proxy/memory_trim.h"

namespace sluice::proxy {
namespace {

// Runs `base` for about `ms` milliseconds.
void runFor(event_base* base, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  event_base_loopexit(base, &tv);
  event_base_dispatch(base);
}

TEST(MemoryTrim, TrimsOnceAfterABurstCloses) {
  event_base* base = event_base_new();
  {
    MemoryTrim trim(base);
    for (size_t n = 1; n <= 3000; ++n) trim.onConnectionCount(n);
    for (size_t n = 3000; n-- > 0;) trim.onConnectionCount(n);
    EXPECT_EQ(trim.trims(), 0u) << "not at once: after the deferred deletes";
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 1u);
    // The next burst is measured from there: another one trims again.
    for (size_t n = 1; n <= 2000; ++n) trim.onConnectionCount(n);
    for (size_t n = 2000; n-- > 0;) trim.onConnectionCount(n);
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 2u);
  }
  event_base_free(base);
}

TEST(MemoryTrim, SteadyTrafficAndSmallDropsNeverTrim) {
  event_base* base = event_base_new();
  {
    MemoryTrim trim(base);
    // Connections come and go around 500: the count never falls to a quarter of a peak by
    // kMinDrop.
    for (int round = 0; round < 100; ++round) {
      trim.onConnectionCount(500);
      trim.onConnectionCount(480);
    }
    // A small worker going idle: 600 -> 0 is below kMinDrop.
    for (size_t n = 600; n-- > 0;) trim.onConnectionCount(n);
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 0u);
  }
  event_base_free(base);
}

// A connection for the parker: one end of a socketpair, the test holding the other.
struct FakeConn : IdleParker::Hook {
  int fd = -1;
  int peer = -1;
  int parks = 0;
  int wakes = 0;
  int timeouts = 0;
  bool decline = false;
};

int park(IdleParker::Hook* hook) {
  auto* c = static_cast<FakeConn*>(hook);
  if (c->decline) return -1;
  ++c->parks;
  c->parked_fd = c->fd;
  return c->fd;
}

void wake(IdleParker::Hook* hook, bool timed_out) {
  auto* c = static_cast<FakeConn*>(hook);
  c->parked_fd = -1;
  (timed_out ? c->timeouts : c->wakes)++;
}

class IdleParkerTest : public ::testing::Test {
 protected:
  void SetUp() override { base_ = event_base_new(); }
  void TearDown() override {
    parker_.reset();
    for (auto& c : conns_) {
      close(c.fd);
      close(c.peer);
    }
    event_base_free(base_);
  }
  void make(size_t n) {
    conns_.resize(n);
    for (auto& c : conns_) {
      int sv[2];
      ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
      c.fd = sv[0];
      c.peer = sv[1];
    }
    parker_ = std::make_unique<IdleParker>(base_, IdleParker::Callbacks{&park, &wake});
  }
  event_base* base_ = nullptr;
  std::vector<FakeConn> conns_;
  std::unique_ptr<IdleParker> parker_;
};

TEST_F(IdleParkerTest, ParksAfterASecondAndWakesWhenReadable) {
  make(2);
  parker_->add(&conns_[0], 60000);
  parker_->add(&conns_[1], 60000);
  parker_->remove(&conns_[1]);  // busy again: never parked
  runFor(base_, 300);
  EXPECT_EQ(conns_[0].parks, 0) << "not before kParkAfterMs";
  runFor(base_, IdleParker::kParkAfterMs + IdleParker::kTickMs + 500);
  EXPECT_EQ(conns_[0].parks, 1);
  EXPECT_EQ(conns_[1].parks, 0);
  EXPECT_EQ(parker_->parkedCount(), 1u);
  ASSERT_EQ(write(conns_[0].peer, "G", 1), 1);
  runFor(base_, 200);
  EXPECT_EQ(conns_[0].wakes, 1);
  EXPECT_EQ(conns_[0].timeouts, 0);
  EXPECT_EQ(parker_->parkedCount(), 0u);
}

TEST_F(IdleParkerTest, ParkedConnectionEndsAtItsIdleTimeout) {
  make(1);
  parker_->add(&conns_[0], 2500);
  runFor(base_, 2500 + 2 * IdleParker::kTickMs + 500);
  EXPECT_EQ(conns_[0].parks, 1);
  EXPECT_EQ(conns_[0].timeouts, 1);
  EXPECT_EQ(conns_[0].wakes, 0);
}

TEST_F(IdleParkerTest, DecliningConnectionIsNotParked) {
  make(1);
  conns_[0].decline = true;
  parker_->add(&conns_[0], 60000);
  runFor(base_, IdleParker::kParkAfterMs + IdleParker::kTickMs + 500);
  EXPECT_EQ(conns_[0].parks, 0);
  EXPECT_EQ(parker_->idleCount(), 0u);
}

TEST_F(IdleParkerTest, BeyondTheLimitTheOldestAreParkedSooner) {
  const size_t n = IdleParker::kMaxUnparked + 50;
  make(n);
  for (auto& c : conns_) parker_->add(&c, 60000);
  // Well before kParkAfterMs: the busy tick parks those beyond the limit.
  runFor(base_, IdleParker::kBusyTickMs + 300);
  EXPECT_GE(parker_->parkedCount(), 50u);
  EXPECT_LE(parker_->idleCount(), IdleParker::kMaxUnparked);
  EXPECT_EQ(conns_[0].parks, 1) << "the oldest first";
  EXPECT_EQ(conns_[n - 1].parks, 0);
  // Removing a parked one stops watching its socket: no wake for it.
  parker_->remove(&conns_[0]);
  conns_[0].parked_fd = -1;
  ASSERT_EQ(write(conns_[0].peer, "x", 1), 1);
  runFor(base_, 200);
  EXPECT_EQ(conns_[0].wakes, 0);
}

}  // namespace
}  // namespace sluice::proxy
