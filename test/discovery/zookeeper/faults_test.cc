// The zookeeper discovery plugin in-process against a real ZooKeeper server that is killed,
// restarted, and whose sessions are expired: clusters are never cleared by a connection problem,
// and the registry is followed again afterwards. Also the cache file for a cold start during an
// outage. The server is restarted inside tests, so this suite has its own.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "discovery/zookeeper/cache_file.h"
#include "test/discovery/zookeeper/plugin_fixture.h"
#include "test/harness/env.h"

namespace sluice::zookeeper {
namespace {

class FaultTest : public PluginTest {
 protected:
  void SetUp() override {
    if (!server_->running() || !server_->serving()) ASSERT_TRUE(server_->start());
    PluginTest::SetUp();
  }
};

TEST_F(FaultTest, ConnectionLossKeepsClustersAndARestartIsFollowed) {
  put(at("restapi/10.0.0.1:80"));
  put(at("restapi/10.0.0.2:80"));
  start();
  ASSERT_EQ(cluster("restapi"), "10.0.0.1:80,10.0.0.2:80");
  size_t before = host_.publishCount();
  zk_.reset();
  server_->kill();
  ASSERT_TRUE(host_.waitForLog("connection to ZooKeeper lost", milliseconds(10000)));
  std::this_thread::sleep_for(milliseconds(1500));
  EXPECT_EQ(host_.publishCount(), before) << "nothing published while disconnected";
  EXPECT_EQ(cluster("restapi"), "10.0.0.1:80,10.0.0.2:80");
  // Back within the session timeout: the same session goes on; changes are followed again.
  ASSERT_TRUE(server_->start());
  zk_ = std::make_unique<zk::ZkClient>(server_->servers());
  ASSERT_TRUE(zk_->connected());
  del(at("restapi/10.0.0.1:80"));
  put(at("restapi/10.0.0.3:80"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.2:80,10.0.0.3:80")) << cluster("restapi");
  EXPECT_TRUE(plugin_->status().connected);
}

TEST_F(FaultTest, SessionExpiryOpensANewSessionAndRelists) {
  put(at("restapi/10.0.0.1:80"));
  start();
  clientid_t id{};
  ASSERT_TRUE(plugin_->clientId(&id));
  int64_t first = plugin_->status().session_id;
  ASSERT_TRUE(zk::expireSession(server_->servers(), id));
  put(at("restapi/10.0.0.2:80"));  // while the old session is gone: only a re-list sees it
  ASSERT_TRUE(host_.waitForLog("expired; opening a new session", milliseconds(10000)));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.1:80,10.0.0.2:80")) << cluster("restapi");
  auto status = plugin_->status();
  EXPECT_NE(status.session_id, first);
  EXPECT_TRUE(status.connected);
  // The new session's watches work.
  del(at("restapi/10.0.0.1:80"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.2:80")) << cluster("restapi");
}

TEST_F(FaultTest, ColdStartDuringAnOutageServesTheCacheFile) {
  std::string cache = test::uniqueTmpPath("zk-cache.yaml");
  put(at("restapi/10.0.0.1:80"), R"({"weight": 3})");
  put(at("orders/10.0.0.2:80"));
  config().cache_file = cache;
  start();
  stopPlugin();
  std::string text = test::readFile(cache);
  EXPECT_NE(text.find("10.0.0.1:80"), std::string::npos) << text;

  zk_.reset();
  server_->kill();
  config().initial_wait_ms = 1000;
  size_t before = host_.publishCount();
  start();
  ASSERT_EQ(host_.publishCount(), before + 1) << "the cache is published inside start()";
  EXPECT_EQ(cluster("restapi"), "10.0.0.1:80 w=3");
  EXPECT_EQ(cluster("orders"), "10.0.0.2:80");
  EXPECT_TRUE(plugin_->status().from_cache);
  EXPECT_EQ(host_.countLogs("from the cache file " + cache), 1u);

  // ZooKeeper comes back with a change: its snapshot replaces the cached one.
  ASSERT_TRUE(server_->start());
  zk_ = std::make_unique<zk::ZkClient>(server_->servers());
  put(at("orders/10.0.0.5:80"));
  ASSERT_TRUE(waitCluster("orders", "10.0.0.2:80,10.0.0.5:80")) << cluster("orders");
  EXPECT_FALSE(plugin_->status().from_cache);
}

TEST_F(FaultTest, ColdStartWithoutCacheWaitsForZooKeeper) {
  put(at("restapi/10.0.0.1:80"));
  zk_.reset();
  server_->kill();
  config().initial_wait_ms = 500;
  start();
  EXPECT_EQ(host_.publishCount(), 0u);
  EXPECT_EQ(host_.countLogs("starting without its clusters"), 1u);
  ASSERT_TRUE(server_->start());
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.1:80", milliseconds(20000))) << cluster("restapi");
}

TEST_F(FaultTest, StopIsPromptWhileZooKeeperIsDownOrHung) {
  put(at("restapi/10.0.0.1:80"));
  start();
  // Hung: the process is stopped, its socket open, nothing answers.
  ASSERT_TRUE(server_->pause());
  auto begin = std::chrono::steady_clock::now();
  stopPlugin();
  double hung_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_TRUE(server_->resume());
  // Down: connection refused.
  start();
  zk_.reset();
  server_->kill();
  ASSERT_TRUE(host_.waitForLog("connection to ZooKeeper lost", milliseconds(10000)));
  begin = std::chrono::steady_clock::now();
  stopPlugin();
  double down_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  std::printf("stop() with ZooKeeper hung: %.0f ms, down: %.0f ms (session timeout 4000 ms)\n",
              hung_ms, down_ms);
  EXPECT_LT(hung_ms, 10000);
  EXPECT_LT(down_ms, 10000);
}

}  // namespace
}  // namespace sluice::zookeeper
