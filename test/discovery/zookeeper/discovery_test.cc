// The zookeeper discovery plugin in-process against a real ZooKeeper server (one per suite,
// one root per test): what it publishes as the registry changes, in the three formats, with
// malformed nodes, bursts, deleted parents, empty-list protection, auth, chroot and
// self-registration.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <thread>

#include "test/discovery/zookeeper/plugin_fixture.h"
#include "test/harness/harness.h"

namespace sluice::zookeeper {
namespace {

TEST_F(PluginTest, FirstSnapshotIsPublishedBeforeStartReturns) {
  put(at("restapi/10.0.0.1:8080"));
  put(at("restapi/10.0.0.2:8080"), R"({"weight": 5, "zone": "a", "metadata": {"v": "2"}})");
  put(at("billing"));
  start();
  ASSERT_GE(host_.publishCount(), 1u) << "start() waits for the first complete snapshot";
  EXPECT_EQ(cluster("restapi"), "10.0.0.1:8080,10.0.0.2:8080 w=5 zone=a v=2");
  EXPECT_EQ(cluster("billing"), "");  // a context path with no instance yet: an empty cluster
  auto status = plugin_->status();
  EXPECT_TRUE(status.connected);
  EXPECT_EQ(status.last.clusters, 2u);
  EXPECT_EQ(status.last.endpoints, 2u);
}

TEST_F(PluginTest, FollowsInstancesDataAndClusters) {
  put(at("restapi/10.0.0.1:8080"));
  start();
  put(at("restapi/10.0.0.2:8080"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.1:8080,10.0.0.2:8080")) << cluster("restapi");
  put(at("restapi/10.0.0.2:8080"), R"({"weight": 9})");
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.1:8080,10.0.0.2:8080 w=9")) << cluster("restapi");
  del(at("restapi/10.0.0.1:8080"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.2:8080 w=9")) << cluster("restapi");
  put(at("orders/10.0.0.3:80"));
  ASSERT_TRUE(waitCluster("orders", "10.0.0.3:80")) << cluster("orders");
  // Ephemeral instances go with their session.
  {
    zk::ZkClient backend(server_->servers());
    ASSERT_EQ(backend.create(at("orders/10.0.0.4:80"), "", true), ZOK);
    ASSERT_TRUE(waitCluster("orders", "10.0.0.3:80,10.0.0.4:80")) << cluster("orders");
  }
  ASSERT_TRUE(waitCluster("orders", "10.0.0.3:80")) << cluster("orders");
  // A data change that changes nothing sluice uses publishes nothing.
  size_t before = host_.publishCount();
  put(at("orders/10.0.0.3:80"), R"({"metadata": {}})");
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(host_.publishCount(), before);
}

TEST_F(PluginTest, MalformedNodesNeverPoisonTheOthers) {
  put(at("restapi/10.0.0.1:8080"));
  put(at("restapi/10.0.0.2:8080"), "{not json");
  put(at("restapi/no-port"));
  put(at("restapi/10.0.0.3:8080"), R"({"weight": -4})");
  put(at("bad name/10.0.0.9:80"));
  put(at("orders/10.0.0.5:80"));
  start();
  EXPECT_EQ(cluster("restapi"), "10.0.0.1:8080");
  EXPECT_EQ(cluster("orders"), "10.0.0.5:80");
  EXPECT_EQ(plugin_->status().last.malformed, 5u);  // 3 instances, 1 bad name (+ its instance)
  EXPECT_EQ(host_.countLogs("skipping malformed node " + at("restapi/10.0.0.2:8080")), 1u);
  EXPECT_EQ(host_.countLogs("skipping malformed node " + at("restapi/no-port")), 1u);
  // Fixed in place: it joins; the other bad ones are not logged again.
  put(at("restapi/10.0.0.2:8080"), "{}");
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.1:8080,10.0.0.2:8080")) << cluster("restapi");
  EXPECT_EQ(host_.countLogs("skipping malformed node " + at("restapi/no-port")), 1u);
  EXPECT_EQ(plugin_->status().last.malformed, 4u);
}

TEST_F(PluginTest, BurstIsCoalescedIntoOneCompleteSnapshot) {
  put(at("restapi/10.0.0.1:80"));
  config().debounce_ms = 400;  // far longer than the burst below takes
  start();
  size_t before = host_.publishCount();
  for (int i = 2; i <= 41; ++i) put(at("restapi/10.0.1." + std::to_string(i) + ":80"));
  for (int i = 1; i <= 5; ++i) put(at("orders/10.0.2." + std::to_string(i) + ":80"));
  ASSERT_TRUE(host_.waitFor(
      [](const testing::PublishedSnapshot& s) {
        return s.count("restapi") && s.at("restapi").size() == 41 && s.count("orders") &&
               s.at("orders").size() == 5;
      },
      milliseconds(10000)));
  std::this_thread::sleep_for(milliseconds(600));
  EXPECT_EQ(host_.publishCount(), before + 1) << "one snapshot for the whole burst";
}

TEST_F(PluginTest, MissingRootIsWaitedForAndDeletedParentsAreWatchedAgain) {
  config().empty_protection = false;
  start();
  EXPECT_EQ(host_.publishCount(), 1u) << "a missing root is a complete, empty registry";
  EXPECT_TRUE(host_.last().empty());
  put(at("restapi/10.0.0.1:80"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.1:80"));
  // The context path node deleted and re-created.
  del(at("restapi"));
  ASSERT_TRUE(waitCluster("restapi", "-"));
  put(at("restapi/10.0.0.2:80"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.2:80")) << cluster("restapi");
  // The root itself deleted and re-created.
  del(root());
  ASSERT_TRUE(host_.waitFor([](const auto& s) { return s.empty(); }, milliseconds(10000)));
  put(at("orders/10.0.0.3:80"));
  ASSERT_TRUE(waitCluster("orders", "10.0.0.3:80")) << cluster("orders");
  put(at("orders/10.0.0.4:80"));
  ASSERT_TRUE(waitCluster("orders", "10.0.0.3:80,10.0.0.4:80")) << cluster("orders");
}

TEST_F(PluginTest, EmptyProtectionHoldsTheLastList) {
  put(at("restapi/10.0.0.1:80"));
  put(at("restapi/10.0.0.2:80"));
  put(at("orders/10.0.0.3:80"));
  start();
  del(at("restapi/10.0.0.1:80"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.2:80"));
  del(at("restapi/10.0.0.2:80"));
  del(at("orders"));
  ASSERT_TRUE(host_.waitForLog("cluster 'orders' would have no endpoints (its node is gone)",
                               milliseconds(10000)));
  ASSERT_TRUE(host_.waitForLog("cluster 'restapi' would have no endpoints", milliseconds(10000)));
  EXPECT_EQ(cluster("restapi"), "10.0.0.2:80");
  EXPECT_EQ(cluster("orders"), "10.0.0.3:80");
  EXPECT_EQ(plugin_->status().held, (std::vector<std::string>{"orders", "restapi"}));
  put(at("restapi/10.0.0.7:80"));
  ASSERT_TRUE(waitCluster("restapi", "10.0.0.7:80"));
  EXPECT_EQ(host_.countLogs("cluster 'restapi' has instances again"), 1u);
}

TEST_F(PluginTest, EmptyProtectionOffEmptiesTheCluster) {
  put(at("restapi/10.0.0.1:80"));
  put(at("orders/10.0.0.3:80"));
  config().empty_protection = false;
  start();
  del(at("restapi/10.0.0.1:80"));
  ASSERT_TRUE(waitCluster("restapi", ""));
  del(at("orders"));
  ASSERT_TRUE(waitCluster("orders", "-"));
}

TEST_F(PluginTest, DubboRestProviders) {
  config().format = FormatKind::kDubbo;
  auto provider = [&](const std::string& iface, const std::string& url) {
    put(at(iface + "/providers/" + url));
  };
  put(at("com.example.UserService/consumers/consumer%3A%2F%2F10.9.9.9%2Fx"));
  put(at("com.example.UserService/configurators"));
  provider("com.example.UserService",
           "rest%3A%2F%2F10.1.2.3%3A8080%2Frestapi%2Fcom.example.UserService%3Fapplication%3D"
           "users%26interface%3Dcom.example.UserService%26weight%3D50");
  provider("com.example.OrderService",
           "rest%3A%2F%2F10.1.2.3%3A8080%2Frestapi%2Fcom.example.OrderService%3Fweight%3D20");
  provider("com.example.OrderService",
           "dubbo%3A%2F%2F10.1.2.3%3A20880%2Fcom.example.OrderService%3Fanyhost%3Dtrue");
  provider("com.example.OrderService",
           "rest%3A%2F%2F10.1.2.4%3A8080%2Forders%2Fcom.example.OrderService%3Fenabled%3Dfalse");
  provider("com.example.Legacy", "rest%3A%2F%2F10.1.2.5%3A80%2Fcom.example.Legacy");
  provider("com.example.Broken", "rest%3A%2F%2F10.1.2.6%3A99999%2Fapi%2Fx");
  start();
  EXPECT_EQ(cluster("restapi"), "10.1.2.3:8080 w=50 protocol=rest application=users");
  EXPECT_EQ(cluster("orders"), "-");  // its only provider is disabled
  auto status = plugin_->status();
  EXPECT_EQ(status.last.malformed, 1u);
  EXPECT_EQ(status.last.skipped, 3u);  // dubbo://, enabled=false, no context path
  // A second host registers under the same context path (through an interface node created
  // only now, and its providers node after it).
  provider("com.example.PaymentService",
           "rest%3A%2F%2F10.1.2.7%3A8080%2Frestapi%2Fcom.example.PaymentService");
  ASSERT_TRUE(waitCluster("restapi",
                          "10.1.2.3:8080 w=50 protocol=rest application=users,"
                          "10.1.2.7:8080 w=100 protocol=rest"))
      << cluster("restapi");
}

TEST_F(PluginTest, CuratorSpringCloudInstances) {
  config().format = FormatKind::kCurator;
  auto instance = [](const std::string& id, const std::string& address, int port,
                     const std::string& status) {
    return R"({"name":"restapi","id":")" + id + R"(","address":")" + address + R"(","port":)" +
           std::to_string(port) +
           R"(,"sslPort":null,"payload":{"@class":"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance","id":"restapi","name":"restapi","metadata":{"instance_status":")" +
           status +
           R"("}},"registrationTimeUTC":1690000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[]}})";
  };
  put(at("restapi/a1"), instance("a1", "10.1.0.1", 8080, "UP"));
  put(at("restapi/a2"), instance("a2", "10.1.0.2", 8080, "OUT_OF_SERVICE"));
  put(at("restapi/a3"), "{broken");
  start();
  EXPECT_EQ(cluster("restapi"), "10.1.0.1:8080 instance_status=UP instance_id=a1");
  put(at("restapi/a2"), instance("a2", "10.1.0.2", 8080, "UP"));
  ASSERT_TRUE(waitCluster("restapi",
                          "10.1.0.1:8080 instance_status=UP instance_id=a1,"
                          "10.1.0.2:8080 instance_status=UP instance_id=a2"))
      << cluster("restapi");
}

TEST_F(PluginTest, DigestAuthAndChroot) {
  // The registry lives under a chroot, readable only with the right credentials.
  zk::ZkClient owner(server_->servers());
  ASSERT_EQ(owner.addDigest("gw:secret"), ZOK);
  ASSERT_EQ(owner.create("/chroot" + root(), ""), ZOK);
  ASSERT_EQ(owner.create("/chroot" + root() + "/restapi", "", false, true), ZOK);
  ASSERT_EQ(owner.create("/chroot" + at("restapi/10.0.0.1:80"), "", false, true), ZOK);
  config().servers = server_->servers() + "/chroot";
  config().auth.emplace("gw", "secret");
  start();
  EXPECT_EQ(cluster("restapi"), "10.0.0.1:80");
  stopPlugin();
  // Without credentials the listing is refused (and said so); nothing is published.
  config().auth.reset();
  config().initial_wait_ms = 1500;
  size_t before = host_.publishCount();
  start();
  EXPECT_TRUE(host_.waitForLog("not authenticated", milliseconds(5000)));
  EXPECT_EQ(host_.publishCount(), before);
}

TEST_F(PluginTest, SelfRegistrationKeepsEphemeralNodes) {
  RegisterConfig reg;
  reg.path = root() + "-gateways/edge";  // outside the watched root
  reg.addresses = {"127.0.0.1:8080", "127.0.0.2:8080"};
  reg.data = R"({"weight": 2})";
  config().register_self = reg;
  start();
  std::string node = reg.path + "/127.0.0.1:8080";
  auto registered = [&](const std::string& path) {
    for (int i = 0; i < 200 && !zk_->exists(path); ++i)
      std::this_thread::sleep_for(milliseconds(25));
    return zk_->exists(path);
  };
  ASSERT_TRUE(registered(node));
  ASSERT_TRUE(registered(reg.path + "/127.0.0.2:8080"));
  std::string data;
  ASSERT_EQ(zk_->get(node, &data), ZOK);
  EXPECT_EQ(data, R"({"weight": 2})");
  // Deleted by someone: put back.
  ASSERT_EQ(zk_->remove(node, false), ZOK);
  std::this_thread::sleep_for(milliseconds(100));
  ASSERT_TRUE(registered(node));
  // Stopped: gone at once (the session is closed, not left to expire).
  stopPlugin();
  EXPECT_FALSE(zk_->exists(node));
  EXPECT_FALSE(zk_->exists(reg.path + "/127.0.0.2:8080"));
}

// tools/zk/register: nodes in the sluice layout that live as long as the command runs.
TEST_F(PluginTest, RegisterCliKeepsNodesWhileItRuns) {
  start();
  std::string servers = server_->servers();
  {
    test::Process reg({test::runfile("tools/zk/register"), "--servers", servers, "--root", root(),
                       "--weight", "5", "--zone", "a", "--meta", "version=v2",
                       "restapi=10.0.0.1:80", "restapi=10.0.0.2:80"});
    ASSERT_TRUE(reg.waitForOutput("registered 2 ephemeral nodes", 10000)) << reg.outputTail();
    ASSERT_TRUE(waitCluster("restapi",
                            "10.0.0.1:80 w=5 zone=a version=v2,"
                            "10.0.0.2:80 w=5 zone=a version=v2"))
        << cluster("restapi");
    ASSERT_TRUE(reg.signal(SIGTERM));
    EXPECT_EQ(reg.waitExit(10000), 0);
  }
  EXPECT_FALSE(zk_->exists(at("restapi/10.0.0.1:80"))) << "gone with the command's session";
  // --persistent creates and exits; --delete removes.
  test::Process persistent({test::runfile("tools/zk/register"), "--servers", servers, "--root",
                            root(), "--persistent", "orders=10.0.0.3:80"});
  EXPECT_EQ(persistent.waitExit(10000), 0) << persistent.outputTail();
  ASSERT_TRUE(waitCluster("orders", "10.0.0.3:80"));
  test::Process remove({test::runfile("tools/zk/register"), "--servers", servers, "--delete",
                        at("orders/10.0.0.3:80")});
  EXPECT_EQ(remove.waitExit(10000), 0) << remove.outputTail();
  EXPECT_FALSE(zk_->exists(at("orders/10.0.0.3:80")));
  test::Process usage({test::runfile("tools/zk/register"), "--servers", servers});
  EXPECT_EQ(usage.waitExit(10000), 2);
}

}  // namespace
}  // namespace sluice::zookeeper
