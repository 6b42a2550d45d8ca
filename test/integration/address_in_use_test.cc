// A listener or admin address that another process holds is refused at start with a clear
// error, and the process that holds it keeps every connection: a second sluice started by
// mistake on the same address must not share it through SO_REUSEPORT.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "test/harness/sockets.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

// `instance` tags every response (X-Instance) so a test can tell two sluices apart.
constexpr char kConfig[] = R"(workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: headers
        config: { response: { set: { X-Instance: "${INSTANCE}" } } }
clusters:
  - name: svc
    endpoints: [${BACKEND}]
)";

// Starts sluice on `yaml` and waits for it to exit; its exit code (-1 when it kept running for
// 15 s, i.e. it started), output in *out.
int runToExit(const std::string& yaml, std::string* out) {
  TempConfig config(yaml, "second.yaml");
  Process p({runfile("core/sluice"), "-c", config.path()}, {}, "second-sluice");
  int code = p.waitExit(15000);
  *out = p.output();
  return code;
}

std::string expectedRefusal(int port) {
  return "cannot bind 127.0.0.1:" + std::to_string(port) +
         ": address already in use (held by another process)";
}

TEST(AddressInUseTest, SecondSluiceOnTheSameListenerIsRefusedFirstKeepsEveryRequest) {
  EchoBackend backend("backend");
  Gateway first(kConfig, {{"INSTANCE", "first"}, {"BACKEND", backend.address()}});
  ASSERT_TRUE(first.ready());

  std::string out;
  const std::string second = substitute(kConfig, {{"PORT", std::to_string(first.port())},
                                                  {"ADMIN", std::to_string(freePort())},
                                                  {"PLUGINS", pluginPathsYaml()},
                                                  {"INSTANCE", "second"},
                                                  {"BACKEND", backend.address()}});
  const int code = runToExit(second, &out);
  EXPECT_NE(code, -1) << "the second sluice started on the first one's address:\n" << out;
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("listener 'edge': " + expectedRefusal(first.port())), std::string::npos)
      << out;

  // Every new connection still reaches the first sluice.
  int served_by_first = 0;
  for (int i = 0; i < 50; ++i) {
    Response r = httpGet(first.port(), "/svc/n" + std::to_string(i));
    EXPECT_EQ(r.status, 200) << r.error;
    if (r.header("X-Instance") == "first") ++served_by_first;
  }
  EXPECT_EQ(served_by_first, 50);
  EXPECT_TRUE(first.process().running());
}

TEST(AddressInUseTest, SecondSluiceOnTheSameAdminAddressIsRefused) {
  EchoBackend backend("backend");
  Gateway first(kConfig, {{"INSTANCE", "first"}, {"BACKEND", backend.address()}});
  ASSERT_TRUE(first.ready());

  std::string out;
  const std::string second = substitute(kConfig, {{"PORT", std::to_string(freePort())},
                                                  {"ADMIN", std::to_string(first.adminPort())},
                                                  {"PLUGINS", pluginPathsYaml()},
                                                  {"INSTANCE", "second"},
                                                  {"BACKEND", backend.address()}});
  const int code = runToExit(second, &out);
  EXPECT_NE(code, -1) << "the second sluice started:\n" << out;
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find("admin: " + expectedRefusal(first.adminPort())), std::string::npos) << out;
  EXPECT_EQ(httpGet(first.adminPort(), "/ready").status, 200);
  EXPECT_EQ(httpGet(first.port(), "/svc/x").header("X-Instance"), "first");
}

TEST(AddressInUseTest, AddressHeldWithSoReusePortBySameUserIsRefused) {
  // The kernel would let sluice's SO_REUSEPORT sockets join this one (same UID); sluice must
  // not.
  ReusePortListener holder;
  ASSERT_NE(holder.port(), 0);
  std::string out;
  const int code = runToExit(substitute(kConfig, {{"PORT", std::to_string(holder.port())},
                                                  {"ADMIN", std::to_string(freePort())},
                                                  {"PLUGINS", pluginPathsYaml()},
                                                  {"INSTANCE", "x"},
                                                  {"BACKEND", "127.0.0.1:1"}}),
                             &out);
  EXPECT_NE(code, -1) << "sluice joined a socket of another process:\n" << out;
  EXPECT_NE(code, 0) << out;
  EXPECT_NE(out.find(expectedRefusal(holder.port())), std::string::npos) << out;
}

TEST(AddressInUseTest, StoppedSluiceLeavesTheAddressFree) {
  // A sluice that stopped gives the address back: a new one starts on it at once (the exclusive
  // bind passes connections left in TIME_WAIT).
  EchoBackend backend("backend");
  auto first = std::make_unique<Gateway>(
      kConfig,
      std::map<std::string, std::string>{{"INSTANCE", "first"}, {"BACKEND", backend.address()}});
  ASSERT_TRUE(first->ready());
  const int port = first->port();
  for (int i = 0; i < 5; ++i) ASSERT_EQ(httpGet(port, "/svc/x").status, 200);
  first->process().signal(SIGTERM);
  ASSERT_EQ(first->process().waitExit(15000), 0);
  first.reset();

  TempConfig config(substitute(kConfig, {{"PORT", std::to_string(port)},
                                         {"ADMIN", std::to_string(freePort())},
                                         {"PLUGINS", pluginPathsYaml()},
                                         {"INSTANCE", "again"},
                                         {"BACKEND", backend.address()}}),
                    "again.yaml");
  Process again({runfile("core/sluice"), "-c", config.path()}, {}, "sluice-again");
  ASSERT_TRUE(again.waitForPort(port, 15000)) << again.outputTail();
  EXPECT_EQ(httpGet(port, "/svc/x").header("X-Instance"), "again");
}

}  // namespace
}  // namespace sluice::test
