// Fixture for tests that run the zookeeper discovery plugin's classes in-process (no dlopen, no
// sluice) against a real ZooKeeper server: one server per test suite, a distinct root per test,
// a synchronous client to write the registry, and a RecordingHost that records what the plugin
// logs and publishes.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "discovery/zookeeper/config.h"
#include "discovery/zookeeper/discovery.h"
#include "test/discovery/testing/recording_host.h"
#include "test/discovery/zookeeper/zk_server.h"
#include "tools/zk/zk_client.h"

namespace sluice::zookeeper {

using std::chrono::milliseconds;

class PluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<test::ZkServer>(); }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override;
  void TearDown() override;

  // The config for this test (made on first use): the suite's server, root "/<test name>",
  // format sluice, debounce 20 ms, session timeout 4 s, initial wait 5 s. Adjust before start().
  ZookeeperConfig& config();
  // Starts the plugin on config() and returns it.
  ZookeeperDiscovery& start();
  // Stops and destroys the plugin.
  void stopPlugin();

  // Registry writes through the test's own client (parents created as needed).
  void put(const std::string& path, const std::string& data = "", bool ephemeral = false);
  void del(const std::string& path);
  // root() + "/" + rel.
  std::string at(const std::string& rel) const { return root_ + "/" + rel; }
  const std::string& root() const { return root_; }

  // Waits until the cluster's published entries equal `want` ("-" = absent, "" = empty).
  bool waitCluster(const std::string& cluster, const std::string& want,
                   milliseconds timeout = milliseconds(10000));
  std::string cluster(const std::string& name) { return testing::endpointsOf(host_.last(), name); }

  static std::unique_ptr<test::ZkServer> server_;
  testing::RecordingHost host_;
  std::unique_ptr<zk::ZkClient> zk_;
  std::unique_ptr<ZookeeperConfig> config_;
  std::unique_ptr<ZookeeperDiscovery> plugin_;
  std::string root_;
};

}  // namespace sluice::zookeeper
