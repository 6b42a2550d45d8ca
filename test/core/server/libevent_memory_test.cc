// libevent_memory: libevent keeps working with its allocations routed through the pool, its
// small per-descriptor records land in the pool's region (densely, reused after release), and
// everything larger still comes from malloc.
#include "core/server/libevent_memory.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace sluice::server::libevent_memory {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kPooled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif
#else
constexpr bool kPooled = true;
#endif

// One test: install() must come before the process's first libevent call.
TEST(LibeventMemory, LibeventRunsOnThePoolAndItsFdRecordsAreDense) {
  ASSERT_EQ(install(), kPooled);
  EXPECT_FALSE(install());  // once

  // Small requests come from the region, large ones do not; realloc moves out when growing.
  void* small = allocate(16);
  void* large = allocate(17);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(owns(small), kPooled);
  EXPECT_FALSE(owns(large));
  memset(small, 0xab, 16);
  void* grown = reallocate(small, 64);
  ASSERT_NE(grown, nullptr);
  EXPECT_FALSE(owns(grown));
  EXPECT_EQ(static_cast<unsigned char*>(grown)[15], 0xab);
  release(grown);
  release(large);
  release(nullptr);
  EXPECT_EQ(allocate(0), nullptr);

  // An event loop with events on many descriptors: every one fires, and the base's records
  // for them sit in the region.
  const size_t before = slotsInUse();
  event_base* base = event_base_new();
  ASSERT_NE(base, nullptr);
  constexpr int kPairs = 200;
  std::vector<int> fds;
  std::vector<event*> events;
  int fired = 0;
  for (int i = 0; i < kPairs; ++i) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fds.push_back(sv[0]);
    fds.push_back(sv[1]);
    event* ev = event_new(
        base, sv[0], EV_READ, [](evutil_socket_t, short, void* arg) { ++*static_cast<int*>(arg); },
        &fired);
    ASSERT_EQ(event_add(ev, nullptr), 0);
    events.push_back(ev);
    ASSERT_EQ(write(sv[1], "x", 1), 1);
  }
  if (kPooled) {
    EXPECT_GE(slotsInUse() - before, static_cast<size_t>(kPairs));
  }
  while (fired < kPairs && event_base_loop(base, EVLOOP_ONCE) == 0) {
  }
  EXPECT_EQ(fired, kPairs);

  // Buffers (larger allocations, reallocated as they grow) work as before.
  evbuffer* buf = evbuffer_new();
  std::vector<char> data(100000, 'z');
  ASSERT_EQ(evbuffer_add(buf, data.data(), data.size()), 0);
  EXPECT_EQ(evbuffer_get_length(buf), data.size());
  evbuffer_free(buf);

  for (event* ev : events) event_free(ev);
  for (int fd : fds) close(fd);
  event_base_free(base);
  // The base's records went back to the region's free list and are reused first.
  EXPECT_EQ(slotsInUse(), before);
  if (kPooled) {
    void* again = allocate(8);
    EXPECT_TRUE(owns(again));
    release(again);
  }
}

}  // namespace
}  // namespace sluice::server::libevent_memory
