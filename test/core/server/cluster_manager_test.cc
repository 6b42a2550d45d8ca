// ClusterManager: run-time endpoint changes keep Host objects (and so their in-flight counts,
// health and pooled connections) for addresses that stay; discovery snapshots create, update and
// empty clusters; every change is posted to the workers.
#include "core/server/cluster_manager.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

class ClusterManagerTest : public ::testing::Test {
 protected:
  ClusterManagerTest()
      : manager_([this](std::function<void(proxy::WorkerRuntime&)>) { ++posts_; }) {
    auto info = std::make_shared<upstream::ClusterInfo>();
    info->config.name = "static";
    std::vector<upstream::HostEntry> entries;
    manager_.addInitial(info, std::make_shared<upstream::HostSet>(1, std::move(entries)));
    tmpl_.defaults.connect_timeout_ms = 123;
  }
  std::vector<EndpointSpec> eps(std::initializer_list<const char*> addrs) {
    std::vector<EndpointSpec> out;
    for (const char* a : addrs) out.push_back(EndpointSpec{a, 2, "z", {{"k", "v"}}});
    return out;
  }
  const upstream::HostSet& hosts(const std::string& c) {
    return *manager_.clusters().at(c).hosts;
  }

  int posts_ = 0;
  ClusterManager manager_;
  ClusterTemplate tmpl_;
  std::vector<std::string> errors_;
};

TEST_F(ClusterManagerTest, SameAddressKeepsTheSameHost) {
  ASSERT_TRUE(manager_.setEndpoints("static", eps({"127.0.0.1:1", "127.0.0.1:2"}), &errors_));
  auto kept = hosts("static").at(1).host;
  kept->activeRequests().store(5);
  uint64_t v1 = hosts("static").version();
  ASSERT_TRUE(manager_.setEndpoints("static", eps({"127.0.0.1:2", "127.0.0.1:3"}), &errors_));
  EXPECT_EQ(hosts("static").at(0).host, kept);  // same object: its state carries over
  EXPECT_EQ(hosts("static").at(0).host->active(), 5u);
  EXPECT_GT(hosts("static").version(), v1);
  EXPECT_EQ(hosts("static").at(1).weight, 2u);
  EXPECT_EQ(hosts("static").at(1).metadata.at(0).second, "v");
  EXPECT_EQ(posts_, 2);
  EXPECT_TRUE(errors_.empty());
}

TEST_F(ClusterManagerTest, DuplicateAndUnresolvableEndpointsAreDroppedNotFatal) {
  ASSERT_TRUE(manager_.setEndpoints(
      "static", eps({"127.0.0.1:1", "127.0.0.1:1", "not an address", "127.0.0.1:2"}), &errors_));
  EXPECT_EQ(hosts("static").size(), 2u);
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_NE(errors_[0].find("static"), std::string::npos);
  EXPECT_FALSE(manager_.setEndpoints("nope", eps({"127.0.0.1:1"}), &errors_));
}

TEST_F(ClusterManagerTest, SnapshotsCreateUpdateAndEmptyClusters) {
  manager_.applySnapshot(0, tmpl_, {{"restapi", eps({"127.0.0.1:1"})}, {"static", eps({"127.0.0.1:9"})}},
                         &errors_);
  ASSERT_EQ(manager_.clusters().count("restapi"), 1u);
  // A new cluster takes the discovery entry's defaults; a YAML cluster keeps its own settings.
  EXPECT_EQ(manager_.clusters().at("restapi").info->config.connect_timeout_ms, 123u);
  EXPECT_EQ(manager_.clusters().at("restapi").info->config.name, "restapi");
  EXPECT_NE(manager_.clusters().at("static").info->config.connect_timeout_ms, 123u);
  EXPECT_EQ(hosts("static").size(), 1u);
  // restapi vanishes from the next snapshot: emptied (answers 503), not deleted (no 404).
  manager_.applySnapshot(0, tmpl_, {{"static", eps({"127.0.0.1:9"})}}, &errors_);
  ASSERT_EQ(manager_.clusters().count("restapi"), 1u);
  EXPECT_EQ(hosts("restapi").size(), 0u);
  // Another source's snapshot does not empty clusters it never named.
  manager_.applySnapshot(1, tmpl_, {{"other", eps({"127.0.0.1:4"})}}, &errors_);
  EXPECT_EQ(hosts("static").size(), 1u);
  EXPECT_TRUE(errors_.empty());
}

}  // namespace
}  // namespace sluice::server
