// The wait-queue keys of a cluster (max_requests_per_host, max_queue, queue_timeout_ms): their
// defaults, values in clusters and in cluster_defaults, and file:line errors for bad values.
#include <gtest/gtest.h>

#include "test/core/config/test_util.h"

namespace sluice::config::testing {
namespace {

TEST(QueueConfig, DefaultsLeaveTheLimitOff) {
  auto config = loadOk(std::string(kListener) + "clusters: [{name: a}]\n");
  ASSERT_NE(config, nullptr);
  const Cluster& a = config->clusters[0];
  EXPECT_EQ(a.max_requests_per_host, 0u);
  EXPECT_EQ(a.max_queue, 1024u);
  EXPECT_EQ(a.queue_timeout_ms, 1000u);
}

TEST(QueueConfig, ClusterAndClusterDefaultsValues) {
  auto config = loadOk(std::string(kListener) +
                       "clusters:\n"
                       "  - {name: a, max_requests_per_host: 2, max_queue: 0, "
                       "queue_timeout_ms: 250}\n"
                       "discovery:\n"
                       "  - name: zookeeper\n"
                       "    cluster_defaults: {max_requests_per_host: 8, max_queue: 50, "
                       "queue_timeout_ms: 3000}\n");
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->clusters[0].max_requests_per_host, 2u);
  EXPECT_EQ(config->clusters[0].max_queue, 0u);
  EXPECT_EQ(config->clusters[0].queue_timeout_ms, 250u);
  const Cluster& d = config->discovery[0].cluster_defaults;
  EXPECT_EQ(d.max_requests_per_host, 8u);
  EXPECT_EQ(d.max_queue, 50u);
  EXPECT_EQ(d.queue_timeout_ms, 3000u);
}

TEST(QueueConfig, BadValuesNameTheirLine) {
  auto errors = loadErrors(std::string(kListener) +
                           "clusters:\n"
                           "  - name: a\n"
                           "    max_requests_per_host: -1\n"
                           "    max_queue: lots\n"
                           "    queue_timeout_ms: 0\n");
  EXPECT_TRUE(hasError(errors, "4:28", "max_requests_per_host: expected an integer 0..1000000"));
  EXPECT_TRUE(hasError(errors, "5:16", "max_queue: expected an integer 0..1000000"));
  EXPECT_TRUE(hasError(errors, "6:23", "queue_timeout_ms"));
}

}  // namespace
}  // namespace sluice::config::testing
