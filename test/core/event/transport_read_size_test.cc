// event::Transport reading from a Unix stream socket pair: every byte waiting arrives, a burst
// that is already there takes a few reads of growing size (not one 16 KiB read per readiness
// event), the high watermark still bounds the input buffer, and a short read goes back to 16
// KiB reads.
#include "core/event/transport.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::event {
namespace {

class TransportReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = event_base_new();
    ASSERT_NE(base_, nullptr);
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    reader_fd_ = fds[0];
    writer_fd_ = fds[1];
    int big = 4 << 20;  // the kernel caps it (wmem_max); whatever it allows
    setsockopt(writer_fd_, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
  }
  void TearDown() override {
    transport_.reset();  // closes reader_fd_
    if (writer_fd_ >= 0) close(writer_fd_);
    event_base_free(base_);
  }

  // Writes up to `limit` bytes without blocking; returns how many the socket took.
  size_t fill(size_t limit) {
    std::string chunk(64 * 1024, 'x');
    size_t total = 0;
    while (total < limit) {
      ssize_t n = write(writer_fd_, chunk.data(), std::min(chunk.size(), limit - total));
      if (n <= 0) break;
      total += static_cast<size_t>(n);
    }
    return total;
  }

  void open(size_t high_watermark, bool drain) {
    drain_ = drain;
    Transport::Options options;
    options.read_high_watermark = high_watermark;
    Transport::Handlers handlers;
    handlers.on_data = [](void* arg) {
      auto* self = static_cast<TransportReadTest*>(arg);
      evbuffer* in = self->transport_->input();
      self->reads_.push_back(evbuffer_get_length(in) - self->held_);
      self->max_held_ = std::max(self->max_held_, evbuffer_get_length(in));
      if (self->drain_) {
        self->got_ += evbuffer_get_length(in);
        evbuffer_drain(in, evbuffer_get_length(in));
      } else {
        self->held_ = evbuffer_get_length(in);
        self->got_ = self->held_;
      }
    };
    handlers.on_event = [](void*, short) {};
    handlers.arg = this;
    transport_ = std::make_unique<Transport>(base_, reader_fd_, std::make_unique<PlainIo>(),
                                             options, handlers);
    transport_->start();
    transport_->enableRead();
  }

  // Runs the loop until `bytes` arrived or reading stalls for long (a generous deadline).
  void runUntil(size_t bytes) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    size_t last = got_;
    auto last_change = std::chrono::steady_clock::now();
    while (got_ < bytes && std::chrono::steady_clock::now() < deadline) {
      event_base_loop(base_, EVLOOP_NONBLOCK);
      if (got_ != last) {
        last = got_;
        last_change = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - last_change > std::chrono::milliseconds(500)) {
        break;  // nothing more comes (the watermark test stops here)
      }
    }
  }

  event_base* base_ = nullptr;
  int reader_fd_ = -1;
  int writer_fd_ = -1;
  std::unique_ptr<Transport> transport_;
  bool drain_ = true;
  size_t got_ = 0;
  size_t held_ = 0;
  size_t max_held_ = 0;
  std::vector<size_t> reads_;  // bytes each on_data found new
};

TEST_F(TransportReadTest, WaitingBurstTakesFewGrowingReads) {
  const size_t sent = fill(1 << 20);
  // 16 + 32 + 32 + 32 KiB: four reads take 112 KiB; one 16 KiB read per event would take 7.
  if (sent < 112 * 1024) GTEST_SKIP() << "the socket took only " << sent << " bytes";
  open(0, true);
  runUntil(sent);
  ASSERT_EQ(got_, sent);
  ASSERT_GE(reads_.size(), 4u);
  EXPECT_EQ(reads_[0], 16u * 1024);
  EXPECT_EQ(reads_[1], 32u * 1024);
  EXPECT_EQ(reads_[2], 32u * 1024);
  EXPECT_EQ(reads_[3], 32u * 1024);
  for (size_t n : reads_) EXPECT_LE(n, 32u * 1024);  // never more than the largest read
  EXPECT_LE(reads_.size(), (sent - 16 * 1024) / (32 * 1024) + 2);
}

TEST_F(TransportReadTest, ShortReadGoesBackToSixteenKiB) {
  ASSERT_EQ(fill(80 * 1024), 80u * 1024);  // 16 + 32 + 32: the fourth read finds nothing
  open(0, true);
  runUntil(80 * 1024);
  ASSERT_EQ(reads_.size(), 3u);
  ASSERT_EQ(fill(20 * 1024), 20u * 1024);  // the 32 KiB read ahead gets it all: short
  runUntil(100 * 1024);
  ASSERT_EQ(reads_.size(), 4u);
  EXPECT_EQ(reads_[3], 20u * 1024);
  ASSERT_EQ(fill(40 * 1024), 40u * 1024);  // back at 16 KiB, growing again: 16 + 24
  runUntil(140 * 1024);
  ASSERT_EQ(reads_.size(), 6u);
  EXPECT_EQ(reads_[4], 16u * 1024);
  EXPECT_EQ(reads_[5], 24u * 1024);
}

TEST_F(TransportReadTest, HighWatermarkStillBoundsTheInput) {
  const size_t sent = fill(1 << 20);
  ASSERT_GT(sent, 100u * 1024);
  open(100 * 1024, false);  // never drained: reading stops at the watermark
  runUntil(sent);
  EXPECT_EQ(got_, 100u * 1024);
  EXPECT_EQ(max_held_, 100u * 1024);
}

}  // namespace
}  // namespace sluice::event
