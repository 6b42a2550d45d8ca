// The ClusterManager keeps one wait queue per cluster (max_requests_per_host): the same queue
// across reloads that change the cluster's settings, posted to every worker with the cluster,
// and closed when the cluster is removed (its waiting requests get 503, new ones are refused).
#include <gtest/gtest.h>

#include "core/server/cluster_manager.h"

namespace sluice::server {
namespace {

ClusterSpec spec(const std::string& name, uint32_t limit) {
  auto info = std::make_shared<upstream::ClusterInfo>();
  info->config.name = name;
  info->config.max_requests_per_host = limit;
  return ClusterSpec{info, {EndpointSpec{"127.0.0.1:1", 1, "", {}}}, name};
}

struct Waiter : upstream::WaitTicket::Waiter {
  void onQueueTurn(bool) override {}
};

TEST(ClusterQueue, KeptAcrossReloadsClosedOnRemoval) {
  int posts = 0;
  ClusterManager manager([&](std::function<void(proxy::WorkerRuntime&)>) { ++posts; });
  std::vector<std::string> errors;
  manager.reconcile({spec("a", 2)}, {}, &errors);
  ASSERT_TRUE(errors.empty());
  std::shared_ptr<upstream::WaitQueue> queue = manager.clusters().at("a").queue;
  ASSERT_NE(queue, nullptr);

  // New settings (a new ClusterInfo): the same queue.
  manager.reconcile({spec("a", 5)}, {}, &errors);
  EXPECT_EQ(manager.clusters().at("a").info->config.max_requests_per_host, 5u);
  EXPECT_EQ(manager.clusters().at("a").queue, queue);

  event::Worker worker(0);  // not started: turns would only be queued on it
  Waiter waiter;
  auto ticket = std::make_shared<upstream::WaitTicket>(worker, &waiter);
  EXPECT_EQ(queue->push(ticket, 10), upstream::WaitQueue::Push::kQueued);

  // Removed: the waiting request is handed its (closed) turn, new ones are refused.
  manager.reconcile({}, {}, &errors);
  EXPECT_EQ(manager.clusters().count("a"), 0u);
  EXPECT_TRUE(queue->empty());
  auto later = std::make_shared<upstream::WaitTicket>(worker, &waiter);
  EXPECT_EQ(queue->push(later, 10), upstream::WaitQueue::Push::kClosed);

  // A cluster of the same name added again starts with a new, open queue.
  manager.reconcile({spec("a", 2)}, {}, &errors);
  EXPECT_NE(manager.clusters().at("a").queue, queue);
  EXPECT_EQ(manager.clusters().at("a").queue->push(later, 10), upstream::WaitQueue::Push::kQueued);
}

}  // namespace
}  // namespace sluice::server
