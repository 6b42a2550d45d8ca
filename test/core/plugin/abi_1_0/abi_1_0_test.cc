// ABI compatibility through the real core/sluice binary (see README.md here): a filter built
// against the frozen ABI 1.0 SDK loads and filters requests in today's host, and a plugin
// claiming a newer ABI minor than the host's is refused with a message that says what to do.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/api/common.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

std::string abi(unsigned major, unsigned minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

constexpr char kConfig[] = R"(workers: 2
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - request_id
      - name: abi_1_0_filter
        path: ${SO}
        config: { value: from-1.0 }
routes:
  - prefix: /
    cluster: echo
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

TEST(Abi10Test, FilterBuiltAgainstAbi10LoadsAndFilters) {
  EchoBackend backend("echo");
  Gateway gateway(kConfig, {{"SO", runfile("test/core/plugin/abi_1_0/libabi_1_0_filter.so")},
                            {"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());
  // Several requests, so both workers' instances are likely used; each must be filtered.
  for (int i = 0; i < 4; ++i) {
    Response r = httpGet(gateway.port(), "/old/" + std::to_string(i));
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(echoHeaderValues(r.body, "X-Abi-1-0"), std::vector<std::string>{"from-1.0"})
        << r.body;
    EXPECT_EQ(r.header("X-Abi-1-0-Seen"), "yes");
    // A filter of today's ABI beside it still works.
    EXPECT_EQ(echoHeaderValues(r.body, "X-Request-Id").size(), 1u) << r.body;
  }
}

constexpr char kNewer[] = R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: newer_minor_filter
        path: ${SO}
routes:
  - prefix: /
    cluster: echo
clusters:
  - name: echo
    endpoints: [127.0.0.1:9]
)";

TEST(Abi10Test, PluginClaimingANewerMinorIsRefused) {
  std::string so = runfile("test/core/plugin/abi_1_0/libnewer_minor_filter.so");
  TempConfig config(substitute(
      kNewer, {{"PLUGINS", pluginPathsYaml()}, {"PORT", std::to_string(freePort())}, {"SO", so}}));
  Process p({runfile("core/sluice"), "--validate", "-c", config.path()});
  EXPECT_EQ(p.waitExit(30000), 1);
  std::string out = p.output();
  std::string needs = "plugin needs ABI " + abi(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR + 1) +
                      ", this sluice has ABI " + abi(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR);
  EXPECT_NE(out.find(needs), std::string::npos) << out;
  EXPECT_NE(out.find("upgrade sluice or rebuild the plugin"), std::string::npos) << out;
  // Where: the config line naming it and the file (the path as resolved by the host: here
  // Bazel's runfiles symlink resolved to its target).
  EXPECT_NE(out.find(config.path() + ":7:"), std::string::npos) << out;
  EXPECT_NE(out.find("/libnewer_minor_filter.so"), std::string::npos) << out;
  EXPECT_EQ(out.find("OK"), std::string::npos) << out;
}

}  // namespace
}  // namespace sluice::test
