// Measures sluice with 1,000 endpoints registered across 100 context paths (registered by the
// tools/zk/register CLI from a file, as ephemeral nodes): start-up time to the listener
// accepting (the plugin's start waits for the complete registry, so every cluster exists by
// then), sluice's VmRSS, and how long one change takes to show on the admin endpoint. The same
// figures with an empty registry are the baseline. Printed, not asserted; fails only when the
// clusters do not all appear. No backend listens: the endpoints are never contacted.
//
// "Start" ends when sluice logs "sluice started" (its main loop runs, discovery's start() has
// returned), not when the listener's port takes connections: the kernel queues those from
// bind() on, before discovery starts. initial_wait_ms is raised from its 3 s default so that a
// loaded CI machine (ZooKeeper's JVM sharing two cores with other tests) measures the wait
// instead of running out of it; a start that still gives up is reported with sluice's log.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "test/discovery/zookeeper/e2e_fixture.h"

namespace sluice::test {
namespace {

long vmRssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

using ZkScaleTest = ZkGatewayTest;

constexpr char kWait[] = "initial_wait_ms: 30000";

TEST_F(ZkScaleTest, ThousandEndpointsAcrossHundredContextPaths) {
  // Baseline: the plugin on an empty registry.
  auto begin = Clock::now();
  startSluice({zkEntry(zkConfig(kWait))});
  ASSERT_TRUE(sluice_->ready());
  ASSERT_TRUE(sluice_->process().waitForOutput("sluice started", 40000))
      << sluice_->process().outputTail();
  double empty_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  std::this_thread::sleep_for(milliseconds(500));
  long empty_rss = vmRssKb(sluice_->process().pid());
  sluice_->process().signal(SIGTERM);
  sluice_->process().waitExit(15000);

  // 1,000 endpoints in 100 clusters, registered by the CLI and kept alive by it.
  std::string file = uniqueTmpPath("endpoints.txt");
  std::string lines;
  for (int c = 0; c < 100; ++c) {
    for (int i = 0; i < 10; ++i) {
      lines += "ctx" + std::to_string(c) + " 10.77." + std::to_string(c) + "." +
               std::to_string(i + 1) + ":8080 {\"weight\": " + std::to_string(1 + i) + "}\n";
    }
  }
  ASSERT_TRUE(writeFile(file, lines));
  auto reg_begin = Clock::now();
  Process reg({runfile("tools/zk/register"), "--servers", server_->servers(), "--root", root(),
               "--file", file});
  ASSERT_TRUE(reg.waitForOutput("registered 1000 ephemeral nodes", 60000)) << reg.outputTail();
  double reg_ms = std::chrono::duration<double, std::milli>(Clock::now() - reg_begin).count();

  begin = Clock::now();
  startSluice({zkEntry(zkConfig(kWait))});
  ASSERT_TRUE(sluice_->ready());
  ASSERT_TRUE(sluice_->process().waitForOutput("sluice started", 40000))
      << sluice_->process().outputTail();
  double ready_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  std::string clusters = httpGet(admin_port_, "/clusters").body;
  EXPECT_EQ(count(clusters, "\"balancer\""), 100u)
      << "every cluster exists once started; sluice's log:\n"
      << sluice_->process().outputTail();
  EXPECT_EQ(count(clusters, "\"address\""), 1000u);
  std::this_thread::sleep_for(milliseconds(500));
  long rss = vmRssKb(sluice_->process().pid());

  // One more endpoint in one cluster: time until the admin endpoint shows it.
  auto changed = Clock::now();
  ASSERT_EQ(zk_->create(root() + "/ctx42/10.77.42.99:8080"), ZOK);
  ASSERT_TRUE(waitUntil(
      [&] {
        return httpGet(admin_port_, "/clusters").body.find("10.77.42.99:8080") != std::string::npos;
      },
      milliseconds(10000)))
      << sluice_->process().outputTail();
  double change_ms = std::chrono::duration<double, std::milli>(Clock::now() - changed).count();

  std::printf(
      "registry: 1000 endpoints / 100 context paths, registered by tools/zk/register in %.0f ms\n"
      "sluice start -> started (all clusters known): %.0f ms (empty registry: %.0f ms)\n"
      "sluice VmRSS: %ld KiB (empty registry: %ld KiB, +%ld KiB)\n"
      "one change -> visible on /clusters: %.0f ms\n",
      reg_ms, ready_ms, empty_ms, rss, empty_rss, rss - empty_rss, change_ms);
  RecordProperty("ready_ms", std::to_string(ready_ms));
  RecordProperty("rss_kb", std::to_string(rss));
}

}  // namespace
}  // namespace sluice::test
