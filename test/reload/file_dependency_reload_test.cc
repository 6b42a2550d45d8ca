// depends_on_file (ABI 1.2): a filter whose config reads a file is rebuilt by a reload when the
// file's content changed, even though its YAML did not; an unchanged file keeps the running
// instance. The probe filter forwards the file's first line and its instance number upstream.
#include <gtest/gtest.h>

#include <fstream>

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
    filters:
      - {name: probe, path: '${PROBE}', config: {file: probe_values.txt}}
clusters:
  - name: svc
    endpoints: [${A}]
)";

TEST(FileDependencyReloadTest, AChangedFileRebuildsTheInstanceAnUnchangedOneKeepsIt) {
  EchoBackend a("a");
  // The file sits next to the config (a relative path resolves against the config's directory).
  const std::string dir = testTmpDir();
  auto write = [&](const std::string& line) {
    std::ofstream(dir + "/probe_values.txt", std::ios::trunc) << line << "\n";
  };
  write("first");
  ReloadGateway gateway(
      kConfig, {{"A", a.address()}, {"PROBE", runfile("test/integration/fixtures/libprobe.so")}});
  ASSERT_TRUE(gateway.ready());
  ASSERT_EQ(gateway.configPath().substr(0, gateway.configPath().rfind('/')), dir);
  auto get = [&] {
    Response r = httpGet(gateway.port(), "/svc/x");
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<std::string> file = echoHeaderValues(r.body, "X-Probe-File");
    std::vector<std::string> instance = echoHeaderValues(r.body, "X-Probe-Instance");
    return std::make_pair(file.empty() ? "" : file[0], instance.empty() ? "" : instance[0]);
  };
  auto [line1, instance1] = get();
  EXPECT_EQ(line1, "first");
  ASSERT_NE(gateway.reload(Trigger::kAdmin), 0u);  // nothing changed: the same instance
  auto [line2, instance2] = get();
  EXPECT_EQ(line2, "first");
  EXPECT_EQ(instance2, instance1);
  write("second");  // only the file changes
  ASSERT_NE(gateway.reload(Trigger::kSighup), 0u);
  auto [line3, instance3] = get();
  EXPECT_EQ(line3, "second");
  EXPECT_NE(instance3, instance1);
}

}  // namespace
}  // namespace sluice::test
