// Plugin hot swap: two builds of the test filter "greeter" (test/reload/plugins) answer
// "X-Greeting: hello-a" and "hello-b". Build A is copied to DIR/libgreeter.so and served; build B
// is copied over the same path and reloaded: new requests get B, a request in flight since before
// the reload finishes through A, and A is unloaded only after that (no crash). Then back to A.
#include <gtest/gtest.h>
#include <sys/stat.h>

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
    filters: [greeter]
clusters:
  - name: svc
    endpoints: [${A}]
)";

// Copies build `build` ("a" or "b") over `dest` in place (truncate + write, same inode).
void install(const std::string& build, const std::string& dest) {
  std::string bytes = readFile(runfile("test/reload/plugins/libgreeter_" + build + ".so"));
  ASSERT_FALSE(bytes.empty());
  FILE* f = fopen(dest.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  ASSERT_EQ(fclose(f), 0);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string greeting(int port) { return httpGet(port, "/svc/x").header("X-Greeting"); }

TEST(PluginSwapTest, RebuiltPluginLoadsSideBySideAndOldOneUnloadsWhenUnused) {
  EchoBackend a("a");
  const std::string dir = uniqueTmpPath("plugins");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const std::string so = dir + "/libgreeter.so";
  install("a", so);
  ReloadGateway gateway(kConfig, {{"A", a.address()}, {"PLUGINS", pluginPaths(dir)}});
  ASSERT_TRUE(gateway.ready());
  EXPECT_EQ(greeting(gateway.port()), "hello-a");
  LoadClients load(gateway.port(), 3, "/svc/load");
  load.watchHeader("X-Greeting");

  // A slow request through build A, in flight across the swap.
  RawConnection slow(gateway.port(), 20000);
  ASSERT_TRUE(slow.send(buildRequest("GET", "/svc/delay/1500", {}, "", gateway.port())));
  for (int i = 0; i < 100 && clusterStat(gateway.adminPort(), "svc").hosts[0].active == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  install("b", so);
  ASSERT_EQ(gateway.reload(Trigger::kAdmin), 2u);
  EXPECT_EQ(greeting(gateway.port()), "hello-b");
  EXPECT_NE(gateway.process().output().find("plugin files changed"), std::string::npos)
      << "the reload did not notice the new build:\n"
      << gateway.process().outputTail();
  EXPECT_EQ(gateway.process().output().find("greeter hello-a unloaded"), std::string::npos)
      << "build A was unloaded while a request still used it";

  Response r = slow.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("X-Greeting"), "hello-a") << "the in-flight request left its snapshot";
  // Once that request ended (and keep-alive clients moved on), nothing uses A any more.
  EXPECT_TRUE(gateway.process().waitForOutput("greeter hello-a unloaded", 5000))
      << gateway.process().outputTail();

  // And back to A, then B again: each swap serves the build on disk.
  install("a", so);
  ASSERT_EQ(gateway.reload(Trigger::kSighup), 3u);
  EXPECT_EQ(greeting(gateway.port()), "hello-a");
  install("b", so);
  ASSERT_EQ(gateway.reload(Trigger::kAdmin), 4u);
  EXPECT_EQ(greeting(gateway.port()), "hello-b");

  // A reload with the file unchanged keeps the loaded build (no new load, nothing unloaded).
  const size_t unloads = count(gateway.process().output(), "greeter hello-b unloaded");
  ASSERT_EQ(gateway.reload(Trigger::kSighup), 5u);
  EXPECT_EQ(greeting(gateway.port()), "hello-b");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(count(gateway.process().output(), "greeter hello-b unloaded"), unloads);
  EXPECT_NE(gateway.process().output().find("config version 5, no changes"), std::string::npos);

  load.stop();
  EXPECT_EQ(load.failures(), 0u) << ::testing::PrintToString(load.failureSamples());
  std::map<std::string, uint64_t> seen = load.headerValues();
  EXPECT_EQ(seen["hello-a"] + seen["hello-b"], load.okSinceWatch())
      << "a response without the greeting";
  EXPECT_TRUE(gateway.process().running());
  // Stops cleanly: no crash while unloading what is left.
  gateway.process().signal(SIGTERM);
  EXPECT_EQ(gateway.process().waitExit(15000), 0) << gateway.process().outputTail();
}

}  // namespace
}  // namespace sluice::test
