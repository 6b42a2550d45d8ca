// ConnectionBalancer::pick: a worker keeps what it accepts until it holds more than kSlack
// connections over the least loaded worker, then hands new ones to that worker, reserving them
// there so that accepts racing on other workers see the reservation.
#include "core/proxy/connection_balancer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace sluice::proxy {
namespace {

ConnectionBalancer::PostFn noPost() {
  return [](uint32_t, std::function<void(WorkerRuntime&)>) {};
}

TEST(ConnectionBalancerTest, KeepsTheConnectionWithinTheSlack) {
  ConnectionBalancer b(2, noPost());
  EXPECT_EQ(b.pick(0), 0u);  // 0 vs 0
  b.update(0, 1);
  EXPECT_EQ(b.pick(0), 0u);  // 1 vs 0: within kSlack
  EXPECT_EQ(b.count(1), 0);  // nothing reserved
}

TEST(ConnectionBalancerTest, HandsToTheLeastLoadedWorkerBeyondTheSlack) {
  ConnectionBalancer b(3, noPost());
  b.update(0, 5);
  b.update(1, 3);
  b.update(2, 4);
  EXPECT_EQ(b.pick(0), 1u);
  EXPECT_EQ(b.count(1), 4);  // reserved at once
  // Worker 1 and 2 now hold 4 each: worker 0 (5) is within the slack of both.
  EXPECT_EQ(b.pick(0), 0u);
  // A worker at the minimum never hands away.
  EXPECT_EQ(b.pick(1), 1u);
}

TEST(ConnectionBalancerTest, UpdateReplacesTheReservation) {
  ConnectionBalancer b(2, noPost());
  b.update(0, 4);
  EXPECT_EQ(b.pick(0), 1u);
  EXPECT_EQ(b.count(1), 1);
  b.update(1, 1);  // the target took it
  EXPECT_EQ(b.count(1), 1);
}

// Sequential accepts all landing on worker 0 (the kernel's worst case) end up spread evenly.
TEST(ConnectionBalancerTest, ConnectionsAllAcceptedByOneWorkerSpreadEvenly) {
  constexpr uint32_t kWorkers = 4;
  ConnectionBalancer b(kWorkers, noPost());
  std::vector<size_t> held(kWorkers, 0);
  for (int i = 0; i < 400; ++i) {
    uint32_t to = b.pick(0);
    ++held[to];
    b.update(to, held[to]);
  }
  for (uint32_t w = 0; w < kWorkers; ++w) {
    EXPECT_GE(held[w], 98u) << "worker " << w;
    EXPECT_LE(held[w], 102u) << "worker " << w;
  }
}

// post() reaches the function given at construction with the worker's index.
TEST(ConnectionBalancerTest, PostReachesTheNamedWorker) {
  std::vector<uint32_t> posted;
  ConnectionBalancer b(
      2, [&](uint32_t w, std::function<void(WorkerRuntime&)>) { posted.push_back(w); });
  b.post(1, [](WorkerRuntime&) {});
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0], 1u);
}

// Workers picking concurrently: every pick names a valid worker and reservations add up.
TEST(ConnectionBalancerTest, ConcurrentPicksStayInRange) {
  constexpr uint32_t kWorkers = 2;
  ConnectionBalancer b(kWorkers, noPost());
  b.update(0, 100);
  std::atomic<int> handed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        uint32_t to = b.pick(0);
        ASSERT_LT(to, kWorkers);
        if (to == 1) handed.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  // Worker 1 took reservations until it was within the slack of worker 0's 100.
  EXPECT_EQ(b.count(1), handed.load());
  EXPECT_GE(b.count(1), 99);
  EXPECT_LE(b.count(1), 101);
}

}  // namespace
}  // namespace sluice::proxy
