// Reloads and listener addresses held by other processes: a reload that adds a listener or moves
// one onto an address another process holds is refused with a clear error (also in a dry run)
// and the old config keeps serving; a reload that keeps an address, or swaps two listeners'
// addresses (this process holds both), keeps working.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test/harness/sockets.h"
#include "test/reload/reload_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
  - name: side
    address: 127.0.0.1:${SIDE}
    filters:
      - name: headers
        config: { response: { set: { X-Listener: side } } }
${MORE}
clusters:
  - name: svc
    endpoints: [${A}]
)";

std::string refusal(const std::string& listener, int port) {
  return "listener '" + listener + "': cannot bind 127.0.0.1:" + std::to_string(port) +
         ": address already in use (held by another process)";
}

TEST(ListenerAddressTest, MoveOntoAnAddressHeldByAnotherProcessIsRefused) {
  EchoBackend a("a");
  ReusePortListener holder;
  ASSERT_NE(holder.port(), 0);
  const int side = freePort();
  ReloadGateway gateway(kConfig,
                        {{"A", a.address()}, {"SIDE", std::to_string(side)}, {"MORE", ""}});
  ASSERT_TRUE(gateway.ready());
  LoadClients load(side, 2, "/svc/load");
  ASSERT_TRUE(load.waitResponses(20));

  // "side" moved onto the holder's port: a dry run says why, the reload is refused.
  ASSERT_TRUE(gateway.rewrite(kConfig, {{"SIDE", std::to_string(holder.port())}, {"MORE", ""}}));
  Response dry = gateway.adminReload(true);
  EXPECT_EQ(dry.status, 400) << dry.body;
  EXPECT_NE(dry.body.find(refusal("side", holder.port())), std::string::npos) << dry.body;
  Response r = gateway.adminReload();
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find(refusal("side", holder.port())), std::string::npos) << r.body;
  EXPECT_EQ(gateway.stat("config_version"), 1u);

  // The same by SIGHUP: refused and logged.
  const uint64_t failed = gateway.stat("reloads_failed");
  ASSERT_TRUE(gateway.process().signal(SIGHUP));
  EXPECT_TRUE(gateway.waitStat("reloads_failed", failed + 1)) << gateway.process().outputTail();
  EXPECT_TRUE(gateway.process().waitForOutput(refusal("side", holder.port())));
  EXPECT_EQ(gateway.stat("config_version"), 1u);

  // The old listener keeps serving on its address, every request of it.
  ASSERT_TRUE(load.waitResponses(20));
  for (int i = 0; i < 20; ++i) {
    Response s = httpGet(side, "/svc/x");
    EXPECT_EQ(s.status, 200) << s.error;
    EXPECT_EQ(s.header("X-Listener"), "side");
  }
  load.stop();
  EXPECT_EQ(load.failures(), 0u) << ::testing::PrintToString(load.failureSamples());
}

TEST(ListenerAddressTest, AddedListenerOnAnAddressHeldByAnotherProcessIsRefused) {
  EchoBackend a("a");
  ReusePortListener holder;
  ASSERT_NE(holder.port(), 0);
  const int side = freePort();
  ReloadGateway gateway(kConfig,
                        {{"A", a.address()}, {"SIDE", std::to_string(side)}, {"MORE", ""}});
  ASSERT_TRUE(gateway.ready());
  const std::string extra =
      "  - name: extra\n    address: 127.0.0.1:" + std::to_string(holder.port()) + "\n";
  ASSERT_TRUE(gateway.rewrite(kConfig, {{"MORE", extra}}));
  Response r = gateway.adminReload();
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find(refusal("extra", holder.port())), std::string::npos) << r.body;
  EXPECT_EQ(gateway.stat("config_version"), 1u);
  EXPECT_EQ(httpGet(gateway.port(), "/svc/x").status, 200);
  EXPECT_EQ(httpGet(side, "/svc/x").status, 200);
}

TEST(ListenerAddressTest, KeptAndSwappedAddressesReloadFine) {
  EchoBackend a("a");
  const int side = freePort();
  ReloadGateway gateway(kConfig,
                        {{"A", a.address()}, {"SIDE", std::to_string(side)}, {"MORE", ""}});
  ASSERT_TRUE(gateway.ready());
  const int edge = gateway.port();
  LoadClients load(edge, 2, "/svc/load");

  // Same addresses, another setting: this process holds them, the reload applies.
  ASSERT_TRUE(gateway.rewrite(
      kConfig,
      {{"MORE", "  - name: more\n    address: 127.0.0.1:" + std::to_string(freePort()) + "\n"}}));
  ASSERT_EQ(gateway.reload(Trigger::kAdmin), 2u);
  EXPECT_EQ(httpGet(side, "/svc/x").header("X-Listener"), "side");

  // "edge" and "side" swap addresses: each new address is held by this process (by the other
  // listener, which moves away in the same reload), so the reload applies.
  std::string swapped = kConfig;
  swapped.replace(swapped.find("${PORT}"), 7, "${SIDE}");
  swapped.replace(swapped.find("127.0.0.1:${SIDE}\n    filters"), 17, "127.0.0.1:${PORT}");
  ASSERT_TRUE(gateway.rewrite(swapped, {{"MORE", ""}}));
  ASSERT_EQ(gateway.reload(Trigger::kSighup), 3u) << gateway.process().outputTail();
  for (int i = 0; i < 10; ++i) {  // fresh connections land on either worker
    EXPECT_EQ(httpGet(edge, "/svc/x").header("X-Listener"), "side");
    EXPECT_EQ(httpGet(side, "/svc/x").header("X-Listener"), "");
  }
  load.stop();
  EXPECT_GT(load.ok(), 0u);
}

}  // namespace
}  // namespace sluice::test
