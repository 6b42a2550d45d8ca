// End to end through the real binary: backends register in a real ZooKeeper, sluice (with the
// real libzookeeper.so, dlopened from plugin_paths) routes /gateway/<context path>/... to them
// while clients keep sending requests.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "test/discovery/zookeeper/e2e_fixture.h"

namespace sluice::test {
namespace {

TEST_F(ZkGatewayTest, RegisteredBackendsGetTrafficWithinOneSecond) {
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  EXPECT_EQ(get("/gateway/restapi/x"), "404 ");
  auto registered = Clock::now();
  registerBackend("restapi", a_);
  // The requirement: traffic reaches a newly registered backend within 1 s.
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "200 a"; }, milliseconds(1000)))
      << get("/gateway/restapi/x") << "\n"
      << sluice_->process().outputTail();
  std::printf("registered -> first request served: %.1f ms\n",
              std::chrono::duration<double, std::milli>(Clock::now() - registered).count());
  registerBackend("restapi", b_);
  registerBackend("orders", c_);
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/orders/x") == "200 c"; }, milliseconds(1000)));
  ASSERT_TRUE(waitUntil(
      [&] {
        return burst("/gateway/restapi/x", 10) == std::map<std::string, int>{{"a", 5}, {"b", 5}};
      },
      milliseconds(1000)));
}

// The plugin's file is named like the C client's library (libzookeeper.so vs the system's
// libzookeeper_mt.so.2): check that sluice dlopened exactly the plugin from plugin_paths (the
// loader maps a private copy named "<FNV-1a 64 of the content>-libzookeeper.so") next to the
// system's C client, which the plugin links.
TEST_F(ZkGatewayTest, TheDlopenedLibzookeeperIsThePlugin) {
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  std::string plugin = readFile(runfile("discovery/zookeeper/libzookeeper.so"));
  ASSERT_FALSE(plugin.empty());
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : plugin) hash = (hash ^ c) * 1099511628211ull;
  char name[64];
  std::snprintf(name, sizeof name, "%016llx-libzookeeper.so",
                static_cast<unsigned long long>(hash));
  std::string maps = readFile("/proc/" + std::to_string(sluice_->process().pid()) + "/maps");
  EXPECT_NE(maps.find(name), std::string::npos) << "no mapping of " << name << " in\n" << maps;
  EXPECT_NE(maps.find("libzookeeper_mt.so.2"), std::string::npos);
  EXPECT_EQ(maps.find("/libzookeeper.so"), std::string::npos) << "only the private copy is mapped";
}

TEST_F(ZkGatewayTest, DeregisteringUnderLoadFailsNoRequest) {
  registerBackend("restapi", a_);
  registerBackend("restapi", b_);
  registerBackend("restapi", c_);
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  ASSERT_TRUE(
      waitUntil([&] { return burst("/gateway/restapi/x", 3).size() == 3; }, milliseconds(5000)));
  ClientLoop loop(port_, "/gateway/restapi/loop/", 2);
  ASSERT_TRUE(waitUntil([&] { return loop.total() > 200; }, milliseconds(5000)));
  auto changed = Clock::now();
  deregister("restapi", a_);  // its session closes: the ephemeral node goes at once
  ASSERT_TRUE(waitUntil([&] { return Clock::now() - loop.lastServedBy("a") > milliseconds(300); },
                        milliseconds(5000)));
  std::printf(
      "last response from a: %lld ms after its deregistration\n",
      static_cast<long long>(
          std::chrono::duration_cast<milliseconds>(loop.lastServedBy("a") - changed).count()));
  loop.resetCounts();
  std::this_thread::sleep_for(milliseconds(500));
  loop.stop();
  auto after = loop.served();
  EXPECT_EQ(after["a"], 0);
  EXPECT_GT(after["b"], 0);
  EXPECT_GT(after["c"], 0);
  EXPECT_TRUE(loop.failures().empty()) << loop.failures().size() << " failed of " << loop.total()
                                       << "; first: " << loop.failures().front();
}

TEST_F(ZkGatewayTest, AllThreeFormatsAtOnce) {
  // sluice layout → restapi → a; Dubbo REST provider → orders → b; Curator → spring-svc → c.
  registerBackend("restapi", a_);
  ASSERT_EQ(zk_->create(root() + "-dubbo/com.example.OrderService/providers/" + "rest%3A%2F%2F" +
                        "127.0.0.1%3A" + std::to_string(b_.port()) +
                        "%2Forders%2Fcom.example.OrderService%3Fapplication%3Dorders%26" +
                        "interface%3Dcom.example.OrderService%26side%3Dprovider"),
            ZOK);
  ASSERT_EQ(zk_->create(root() + "-services/spring-svc/3f2a",
                        R"({"name":"spring-svc","id":"3f2a","address":"127.0.0.1","port":)" +
                            std::to_string(c_.port()) +
                            R"(,"sslPort":null,"payload":{"@class":"org.springframework.cloud.)" +
                            R"(zookeeper.discovery.ZookeeperInstance","metadata":)" +
                            R"({"instance_status":"UP"}},"serviceType":"DYNAMIC"})"),
            ZOK);
  std::string servers = "servers: '" + server_->servers() + "'";
  startSluice({zkEntry(zkConfig()),
               zkEntry(servers + ", format: dubbo, root: " + root() + "-dubbo"),
               zkEntry(servers + ", format: curator, root: " + root() + "-services")});
  ASSERT_TRUE(sluice_->ready());
  EXPECT_EQ(get("/gateway/restapi/x"), "200 a");
  EXPECT_EQ(get("/gateway/orders/x"), "200 b");
  EXPECT_EQ(get("/gateway/spring-svc/x"), "200 c");
  // Each keeps following its own registry.
  ASSERT_EQ(zk_->create(root() + "-services/spring-svc/77aa",
                        R"({"address":"127.0.0.1","port":)" + std::to_string(a_.port()) + "}"),
            ZOK);
  ASSERT_TRUE(waitUntil([&] { return burst("/gateway/spring-svc/x", 4).count("a") == 1; },
                        milliseconds(5000)));
}

TEST_F(ZkGatewayTest, EmptyProtectionOnKeepsTheLastListOffAnswers503) {
  // Two entries on two roots, one with protection (the default), one without.
  registerBackend("kept", a_);
  ASSERT_EQ(zk_->create(root() + "-off/dropped/" + b_.address(), "", false), ZOK);
  std::string servers = "servers: '" + server_->servers() + "'";
  startSluice({zkEntry(zkConfig()),
               zkEntry(servers + ", root: " + root() + "-off, empty_protection: false")});
  ASSERT_TRUE(sluice_->ready());
  ASSERT_EQ(get("/gateway/kept/x"), "200 a");
  ASSERT_EQ(get("/gateway/dropped/x"), "200 b");
  deregister("kept", a_);
  ASSERT_EQ(zk_->remove(root() + "-off/dropped/" + b_.address()), ZOK);
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/dropped/x") == "503 "; }, milliseconds(5000)));
  ASSERT_TRUE(sluice_->process().waitForOutput(
      "cluster 'kept' would have no endpoints (no instance registered); empty_protection keeps "
      "its last 1 endpoints",
      5000));
  EXPECT_EQ(get("/gateway/kept/x"), "200 a");
  // Back: both follow the registry again.
  registerBackend("kept", c_);
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/kept/x") == "200 c"; }, milliseconds(5000)));
  ASSERT_EQ(zk_->create(root() + "-off/dropped/" + a_.address(), "", false), ZOK);
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/dropped/x") == "200 a"; }, milliseconds(5000)));
}

TEST_F(ZkGatewayTest, DeletedAndRecreatedParentsAreFollowed) {
  registerBackend("restapi", a_);
  startSluice({zkEntry(zkConfig("empty_protection: false"))});
  ASSERT_TRUE(sluice_->ready());
  ASSERT_EQ(get("/gateway/restapi/x"), "200 a");
  sessions_.clear();
  ASSERT_EQ(zk_->remove(root()), ZOK);  // the whole registry root
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "503 "; }, milliseconds(5000)));
  registerBackend("restapi", b_);  // re-creates the root and the context path
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "200 b"; }, milliseconds(5000)));
  sessions_.clear();
  ASSERT_EQ(zk_->remove(root() + "/restapi", false), ZOK);  // the context path node
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "503 "; }, milliseconds(5000)));
  registerBackend("restapi", c_);
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "200 c"; }, milliseconds(5000)));
}

TEST_F(ZkGatewayTest, ReloadsKeepOrRestartTheEntryWithNoFailedRequest) {
  registerBackend("restapi", a_);
  registerBackend("restapi", b_);
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  ClientLoop loop(port_, "/gateway/restapi/loop/", 2);
  ASSERT_TRUE(waitUntil([&] { return loop.total() > 200; }, milliseconds(5000)));
  // Unchanged entry: it keeps running (same session, no new snapshot needed).
  ASSERT_TRUE(reloadWith({zkEntry(zkConfig())})) << sluice_->process().outputTail();
  EXPECT_EQ(countOutput("connected to ZooKeeper (new session"), 1u);
  // Changed entry: restarted with a new session; the clusters serve throughout.
  ASSERT_TRUE(reloadWith({zkEntry(zkConfig("debounce_ms: 5"))})) << sluice_->process().outputTail();
  ASSERT_TRUE(waitUntil([&] { return countOutput("connected to ZooKeeper (new session") == 2; },
                        milliseconds(5000)));
  std::this_thread::sleep_for(milliseconds(300));
  registerBackend("restapi", c_);  // the new session follows the registry
  ASSERT_TRUE(waitUntil([&] { return loop.served()["c"] > 0; }, milliseconds(5000)));
  loop.stop();
  EXPECT_TRUE(loop.failures().empty()) << loop.failures().size() << " failed of " << loop.total()
                                       << "; first: " << loop.failures().front();
}

// Plugin log lines carry the same timestamp and thread tag as the core's own lines, so plugin
// events can be put on one timeline with the rest.
TEST_F(ZkGatewayTest, PluginLogLinesCarryTimestampsLikeCoreLines) {
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  // The plugin logs from its own thread: wait for its first line rather than race it.
  ASSERT_TRUE(sluice_->process().waitForOutput("[plugin zookeeper]", 10000));
  std::string out = sluice_->process().output();
  size_t plugin_lines = 0;
  for (size_t at = 0; at < out.size();) {
    size_t end = out.find('\n', at);
    std::string line = out.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.find("[plugin zookeeper]") != std::string::npos) {
      ++plugin_lines;
      EXPECT_EQ(line.rfind("20", 0), 0u) << "no timestamp: " << line;
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  EXPECT_GT(plugin_lines, 0u);
}

}  // namespace
}  // namespace sluice::test

namespace sluice::test {
namespace {

// The value of the first sample line of `name` (any labels) in a scrape, or "<absent>".
std::string firstSample(const std::string& text, const std::string& name) {
  size_t at = ("\n" + text).find("\n" + name + "{");
  if (at == std::string::npos) return "<absent>";
  size_t end = text.find('\n', at);
  std::string line = text.substr(at, end - at);
  return line.substr(line.rfind(' ') + 1);
}

// The plugin's own metrics (declared through the plugin metrics ABI) and the core's discovery
// counter reach GET /stats/prometheus: publications, the malformed node, the session state.
TEST_F(ZkGatewayTest, MetricsShowPublicationsMalformedNodesAndSessionState) {
  registerBackend("restapi", a_);
  ASSERT_EQ(zk_->create(root() + "/restapi/not-an-address", "", false), ZOK);  // malformed
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "200 a"; }, milliseconds(5000)));
  std::string text = httpGet(admin_port_, "/stats/prometheus").body;
  EXPECT_EQ(firstSample(text, "sluice_plugin_zookeeper_session_connected"), "1") << text;
  EXPECT_EQ(firstSample(text, "sluice_plugin_zookeeper_malformed_nodes"), "1");
  EXPECT_GE(std::atoi(firstSample(text, "sluice_plugin_zookeeper_publications_total").c_str()), 1);
  EXPECT_NE(text.find("sluice_plugin_zookeeper_publications_total{registry=\"" +
                      server_->servers() + root() + "\"}"),
            std::string::npos);
  EXPECT_GE(std::atoi(firstSample(text, "sluice_discovery_updates_total").c_str()), 1);
  EXPECT_NE(
      text.find("sluice_discovery_updates_total{discovery=\"zookeeper\",result=\"accepted\"}"),
      std::string::npos);
}

}  // namespace
}  // namespace sluice::test
