#include "test/discovery/zookeeper/plugin_fixture.h"

namespace sluice::zookeeper {

std::unique_ptr<test::ZkServer> PluginTest::server_;

void PluginTest::SetUp() {
  ASSERT_NE(server_, nullptr);
  root_ = std::string("/") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  zk_ = std::make_unique<zk::ZkClient>(server_->servers());
  ASSERT_TRUE(zk_->connected());
}

void PluginTest::TearDown() { stopPlugin(); }

ZookeeperConfig& PluginTest::config() {
  if (config_ == nullptr) {
    config_ = std::make_unique<ZookeeperConfig>();
    config_->servers = server_->servers();
    config_->root = root_;
    config_->session_timeout_ms = 4000;
    config_->initial_wait_ms = 5000;
    config_->debounce_ms = 20;
  }
  return *config_;
}

ZookeeperDiscovery& PluginTest::start() {
  config();
  plugin_ = std::make_unique<ZookeeperDiscovery>(*config_, host_.host());
  EXPECT_TRUE(plugin_->start(host_.sink()));
  return *plugin_;
}

void PluginTest::stopPlugin() {
  if (plugin_ != nullptr) plugin_->stop();
  plugin_.reset();
}

void PluginTest::put(const std::string& path, const std::string& data, bool ephemeral) {
  int rc = zk_->create(path, data, ephemeral);
  if (rc == ZNODEEXISTS) rc = zk_->set(path, data);
  ASSERT_EQ(rc, ZOK) << path << ": " << zerror(rc);
}

void PluginTest::del(const std::string& path) {
  int rc = zk_->remove(path, true);
  ASSERT_TRUE(rc == ZOK || rc == ZNONODE) << path << ": " << zerror(rc);
}

bool PluginTest::waitCluster(const std::string& cluster, const std::string& want,
                             milliseconds timeout) {
  return host_.waitFor(
      [&](const testing::PublishedSnapshot& s) { return testing::endpointsOf(s, cluster) == want; },
      timeout);
}

}  // namespace sluice::zookeeper
