// max_requests_per_host: slots are reserved with a compare-and-swap (never more than the limit,
// even with many threads at once), and pickWithRoom offers the balancer only hosts with room,
// asks again when its choice is full, and says "full" (wait) apart from "no host" (503).
#include "core/upstream/host_limit.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace sluice::upstream {
namespace {

std::shared_ptr<Host> makeHost(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return std::make_shared<Host>("limit_test", "127.0.0.1:" + std::to_string(port),
                                reinterpret_cast<sockaddr*>(&a), sizeof(a));
}

std::shared_ptr<HostSet> makeSet(const std::vector<std::shared_ptr<Host>>& hosts) {
  std::vector<HostEntry> entries;
  for (const auto& h : hosts) entries.push_back(HostEntry{h, 1, "", {}});
  return std::make_shared<HostSet>(1, std::move(entries));
}

bool tried(const sluice_pick_context& c, uint32_t i) {
  return std::find(c.tried, c.tried + c.tried_count, i) != c.tried + c.tried_count;
}

// A round-robin-like balancer with the SDK's soft "tried" rule: the first healthy host not in
// ctx.tried, else the first healthy host; -1 without a healthy host. Records what it was offered.
struct SoftBalancer {
  const HostSet* set;
  std::vector<std::vector<uint32_t>> offered;
  int64_t operator()(const sluice_pick_context& c) {
    offered.emplace_back(c.tried, c.tried + c.tried_count);
    int64_t fallback = -1;
    for (uint32_t i = 0; i < set->size(); ++i) {
      if (set->cView()->hosts[i].healthy == 0) continue;
      if (!tried(c, i)) return i;
      if (fallback < 0) fallback = i;
    }
    return fallback;
  }
};

sluice_pick_context context(const std::vector<uint32_t>& tried_hosts) {
  sluice_pick_context c{};
  c.struct_size = sizeof(c);
  c.tried = tried_hosts.data();
  c.tried_count = tried_hosts.size();
  return c;
}

TEST(HostLimit, ReserveStopsAtTheLimitAndReleaseGivesBack) {
  auto h = makeHost(1);
  EXPECT_TRUE(tryReserve(*h, 2));
  EXPECT_TRUE(tryReserve(*h, 2));
  EXPECT_FALSE(tryReserve(*h, 2));
  EXPECT_EQ(h->active(), 2u);
  release(*h);
  EXPECT_TRUE(tryReserve(*h, 2));
  EXPECT_TRUE(tryReserve(*h, 0));  // no limit: always
  EXPECT_EQ(h->active(), 3u);
}

TEST(HostLimit, ManyThreadsNeverExceedTheLimit) {
  auto h = makeHost(2);
  constexpr uint32_t kLimit = 3;
  std::atomic<uint32_t> inside{0};
  std::atomic<uint32_t> most{0};
  std::atomic<uint64_t> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        if (!tryReserve(*h, kLimit)) continue;
        uint32_t now = ++inside;
        uint32_t seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        ++taken;
        --inside;
        release(*h);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(most.load(), kLimit);
  EXPECT_GT(taken.load(), 0u);
  EXPECT_EQ(h->active(), 0u);
}

TEST(HostLimit, WithoutALimitOnePickAsBefore) {
  auto a = makeHost(10), b = makeHost(11);
  auto set = makeSet({a, b});
  a->activeRequests().store(100);
  SoftBalancer lb{set.get(), {}};
  RoomPick p = pickWithRoom(*set, 0, context({}), std::ref(lb));
  EXPECT_EQ(p.index, 0);
  EXPECT_EQ(lb.offered.size(), 1u);
  EXPECT_TRUE(lb.offered[0].empty());
  EXPECT_EQ(a->active(), 101u);
}

TEST(HostLimit, FullHostsAreExcludedBeforeTheBalancerPicks) {
  auto a = makeHost(20), b = makeHost(21), c = makeHost(22);
  auto set = makeSet({a, b, c});
  a->activeRequests().store(2);
  SoftBalancer lb{set.get(), {}};
  RoomPick p = pickWithRoom(*set, 2, context({}), std::ref(lb));
  EXPECT_EQ(p.index, 1);
  ASSERT_EQ(lb.offered.size(), 1u);
  EXPECT_EQ(lb.offered[0], std::vector<uint32_t>{0});
  EXPECT_EQ(b->active(), 1u);
}

TEST(HostLimit, ABalancerThatInsistsOnAFullHostIsOverruledByRoom) {
  auto a = makeHost(30), b = makeHost(31);
  auto set = makeSet({a, b});
  a->activeRequests().store(1);
  int calls = 0;
  auto always_first = [&](const sluice_pick_context&) -> int64_t {
    ++calls;
    return 0;
  };
  RoomPick p = pickWithRoom(*set, 1, context({}), always_first);
  EXPECT_EQ(p.index, 1);  // never the full host
  EXPECT_EQ(a->active(), 1u);
  EXPECT_EQ(b->active(), 1u);
}

TEST(HostLimit, ATriedHostWithRoomBeatsWaiting) {
  auto a = makeHost(40), b = makeHost(41);
  auto set = makeSet({a, b});
  b->activeRequests().store(1);
  SoftBalancer lb{set.get(), {}};
  // Host 0 was tried (a connect failure, say); host 1 is full: host 0 again, not the queue.
  RoomPick p = pickWithRoom(*set, 1, context({0}), std::ref(lb));
  EXPECT_EQ(p.index, 0);
}

TEST(HostLimit, EveryHostFullMeansWaitNoHealthyHostMeansNone) {
  auto a = makeHost(50), b = makeHost(51);
  auto set = makeSet({a, b});
  a->activeRequests().store(2);
  b->activeRequests().store(2);
  SoftBalancer lb{set.get(), {}};
  RoomPick p = pickWithRoom(*set, 2, context({}), std::ref(lb));
  EXPECT_EQ(p.index, -1);
  EXPECT_TRUE(p.full);
  EXPECT_TRUE(lb.offered.empty());  // the balancer is never offered a full host
  EXPECT_EQ(freeSlots(*set, 2), 0u);
  release(*b);
  EXPECT_EQ(freeSlots(*set, 2), 1u);

  a->health().active.store(ActiveHealth::kUnhealthy);
  b->health().active.store(ActiveHealth::kUnhealthy);
  auto sick = makeSet({a, b});
  SoftBalancer lb2{sick.get(), {}};
  RoomPick none = pickWithRoom(*sick, 2, context({}), std::ref(lb2));
  EXPECT_EQ(none.index, -1);
  EXPECT_FALSE(none.full);  // 503 at once, no waiting for hosts that cannot serve
  EXPECT_EQ(freeSlots(*sick, 2), 0u);
}

}  // namespace
}  // namespace sluice::upstream
