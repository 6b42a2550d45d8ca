// MemoryTrim (a trim once a burst of connections has closed, never in steady traffic; trimNow for
// SIGUSR2) and IdleParker (parks after kParkAfterMs, hands a readable socket back, ends one at its
// idle timeout, parks early beyond kMaxUnparked, hands back a slot's sockets on wakeAll and every
// socket when destroyed) on a real event loop, with socketpairs as connections.
#include <event2/event.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <vector>

#include "core/proxy/idle_parker.h"
#include "core/proxy/memory_trim.h"
#include "core/proxy/runtime.h"

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

TEST(MemoryTrim, ThousandsParkedTrimOnceThenNotWithinTheInterval) {
  event_base* base = event_base_new();
  {
    MemoryTrim trim(base);
    for (size_t n = 0; n + 1 < MemoryTrim::kMinDrop; ++n) trim.onParked();
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 0u) << "fewer than kMinDrop parked";
    trim.onParked();
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 1u);
    // As many again right after: not within kParkTrimIntervalMs.
    for (size_t n = 0; n < 2 * MemoryTrim::kMinDrop; ++n) trim.onParked();
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 1u);
  }
  event_base_free(base);
}

TEST(MemoryTrim, TrimNowRunsAtOnceAndTakesThePendingTrimsPlace) {
  event_base* base = event_base_new();
  {
    MemoryTrim trim(base);
    trim.trimNow();
    EXPECT_EQ(trim.trims(), 1u) << "at once, with nothing pending";
    for (size_t n = 1; n <= 3000; ++n) trim.onConnectionCount(n);
    for (size_t n = 3000; n-- > 0;) trim.onConnectionCount(n);  // a trim is now pending
    trim.trimNow();
    EXPECT_EQ(trim.trims(), 2u);
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 2u) << "the pending trim was cancelled";
    // The burst is measured from the trim on: a new one trims again.
    for (size_t n = 1; n <= 2000; ++n) trim.onConnectionCount(n);
    for (size_t n = 2000; n-- > 0;) trim.onConnectionCount(n);
    runFor(base, MemoryTrim::kDelayMs + 500);
    EXPECT_EQ(trim.trims(), 3u);
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

// A connection for the parker: one end of a socketpair, the test holding the other. Parked, it
// is "gone" (the parker holds its socket), as a DownstreamConnection is deleted.
struct FakeConn : IdleParker::Hook {
  int fd = -1;
  int peer = -1;
  uint32_t idle_timeout_ms = 60000;
  std::shared_ptr<ListenerSlot> slot;
  std::shared_ptr<void> session;  // what it leaves with its socket (a TLS session)
  bool decline = false;
  bool parked = false;
  int parks = 0;
  int readable = 0;
  int timeouts = 0;
  int drains = 0;
  int shutdowns = 0;
};

struct Fakes {
  std::map<int, FakeConn*> by_fd;
};

int park(void*, IdleParker::Hook* hook, IdleParker::Owner* owner, std::shared_ptr<void>* kept) {
  auto* c = static_cast<FakeConn*>(hook);
  if (c->decline) return -1;
  ++c->parks;
  c->parked = true;
  owner->slot = c->slot;
  owner->idle_timeout_ms = c->idle_timeout_ms;
  *kept = c->session;
  return c->fd;
}

void wake(void* arg, int fd, const IdleParker::Owner& owner, std::shared_ptr<void> kept,
          IdleParker::Wake why) {
  FakeConn* c = static_cast<Fakes*>(arg)->by_fd.at(fd);
  EXPECT_TRUE(c->parked);
  EXPECT_EQ(owner.slot, c->slot);
  EXPECT_EQ(owner.idle_timeout_ms, c->idle_timeout_ms);
  EXPECT_EQ(kept, c->session) << "what park() left is handed back";
  c->parked = false;
  switch (why) {
    case IdleParker::Wake::kReadable:
      ++c->readable;
      break;
    case IdleParker::Wake::kTimedOut:
      ++c->timeouts;
      break;
    case IdleParker::Wake::kDrain:
      ++c->drains;
      break;
    case IdleParker::Wake::kShutdown:
      ++c->shutdowns;
      break;
  }
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
      fakes_.by_fd[c.fd] = &c;
    }
    parker_ = std::make_unique<IdleParker>(base_, IdleParker::Callbacks{&fakes_, &park, &wake});
  }
  event_base* base_ = nullptr;
  std::vector<FakeConn> conns_;
  Fakes fakes_;
  std::unique_ptr<IdleParker> parker_;
};

TEST_F(IdleParkerTest, ParksAfterASecondAndHandsTheSocketBackWhenReadable) {
  make(2);
  parker_->add(&conns_[0]);
  parker_->add(&conns_[1]);
  parker_->remove(&conns_[1]);  // busy again: never parked
  runFor(base_, 300);
  EXPECT_EQ(conns_[0].parks, 0) << "not before kParkAfterMs";
  runFor(base_, IdleParker::kParkAfterMs + IdleParker::kTickMs + 500);
  EXPECT_EQ(conns_[0].parks, 1);
  EXPECT_EQ(conns_[1].parks, 0);
  EXPECT_EQ(parker_->parkedCount(), 1u);
  EXPECT_EQ(parker_->idleCount(), 0u);
  ASSERT_EQ(write(conns_[0].peer, "G", 1), 1);
  runFor(base_, 200);
  EXPECT_EQ(conns_[0].readable, 1);
  EXPECT_EQ(conns_[0].timeouts, 0);
  EXPECT_EQ(parker_->parkedCount(), 0u);
  // The same socket can be parked again (its record was freed and is made anew).
  char byte;
  ASSERT_EQ(read(conns_[0].fd, &byte, 1), 1);
  parker_->add(&conns_[0]);
  runFor(base_, IdleParker::kParkAfterMs + IdleParker::kTickMs + 500);
  EXPECT_EQ(conns_[0].parks, 2);
  EXPECT_EQ(parker_->parkedCount(), 1u);
}

TEST_F(IdleParkerTest, ClientClosingAParkedSocketHandsItBack) {
  make(1);
  parker_->add(&conns_[0]);
  runFor(base_, IdleParker::kParkAfterMs + IdleParker::kTickMs + 500);
  ASSERT_EQ(conns_[0].parks, 1);
  close(conns_[0].peer);  // the FIN: the owner rebuilds the connection and reads EOF
  conns_[0].peer = -1;
  runFor(base_, 200);
  EXPECT_EQ(conns_[0].readable, 1);
  EXPECT_EQ(parker_->parkedCount(), 0u);
}

TEST_F(IdleParkerTest, ParkedConnectionEndsAtItsIdleTimeout) {
  make(1);
  conns_[0].idle_timeout_ms = 2500;
  parker_->add(&conns_[0]);
  runFor(base_, 2500 + 2 * IdleParker::kTickMs + 500);
  EXPECT_EQ(conns_[0].parks, 1);
  EXPECT_EQ(conns_[0].timeouts, 1);
  EXPECT_EQ(conns_[0].readable, 0);
  EXPECT_EQ(parker_->parkedCount(), 0u);
}

TEST_F(IdleParkerTest, DecliningConnectionIsNotParked) {
  make(1);
  conns_[0].decline = true;
  parker_->add(&conns_[0]);
  runFor(base_, IdleParker::kParkAfterMs + IdleParker::kTickMs + 500);
  EXPECT_EQ(conns_[0].parks, 0);
  EXPECT_EQ(parker_->idleCount(), 0u);
  EXPECT_EQ(parker_->parkedCount(), 0u);
}

TEST_F(IdleParkerTest, BeyondTheLimitTheOldestAreParkedSooner) {
  const size_t n = IdleParker::kMaxUnparked + 50;
  make(n);
  for (auto& c : conns_) parker_->add(&c);
  // Well before kParkAfterMs: the busy tick parks those beyond the limit.
  runFor(base_, IdleParker::kBusyTickMs + 300);
  EXPECT_GE(parker_->parkedCount(), 50u);
  EXPECT_LE(parker_->idleCount(), IdleParker::kMaxUnparked);
  EXPECT_EQ(conns_[0].parks, 1) << "the oldest first";
  EXPECT_EQ(conns_[n - 1].parks, 0);
}

TEST_F(IdleParkerTest, WakeAllHandsBackTheSlotsSocketsAndTheDestructorTheRest) {
  make(6);
  auto a = std::make_shared<ListenerSlot>();
  auto b = std::make_shared<ListenerSlot>();
  for (size_t i = 0; i < conns_.size(); ++i) {
    conns_[i].slot = i % 2 == 0 ? a : b;
    if (i % 3 == 0) conns_[i].session = std::make_shared<int>(static_cast<int>(i));
    conns_[i].idle_timeout_ms = 60000 + static_cast<uint32_t>(i % 3);  // several owners
    parker_->add(&conns_[i]);
  }
  const long held = a.use_count();  // ours and the connections'
  runFor(base_, IdleParker::kParkAfterMs + IdleParker::kTickMs + 500);
  ASSERT_EQ(parker_->parkedCount(), 6u);
  EXPECT_GT(a.use_count(), held) << "the parker holds the slot of its parked sockets";
  parker_->wakeAll(a.get());
  for (size_t i = 0; i < conns_.size(); ++i) EXPECT_EQ(conns_[i].drains, i % 2 == 0 ? 1 : 0) << i;
  EXPECT_EQ(parker_->parkedCount(), 3u);
  EXPECT_EQ(a.use_count(), held) << "released with its last parked socket";
  parker_.reset();
  for (size_t i = 0; i < conns_.size(); ++i) {
    EXPECT_EQ(conns_[i].shutdowns, i % 2 == 0 ? 0 : 1) << i;
  }
  EXPECT_EQ(b.use_count(), held);
}

}  // namespace
}  // namespace sluice::proxy
