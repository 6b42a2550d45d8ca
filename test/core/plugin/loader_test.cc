// Loader refusals, each with a real purpose-made .so: the message names the config file and
// line, the .so file, and the reason.
#include <gtest/gtest.h>

#include <string>

#include "core/plugin/host_api.h"
#include "test/core/plugin/loader_fixture.h"

namespace sluice::plugin {
namespace {

// Log lines without their leading timestamp ("2026-...Z "), to compare the rest exactly.
std::string withoutTimestamps(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    size_t space = line.find(' ');
    out += (space == std::string::npos ? line : line.substr(space + 1)) + "\n";
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

std::string loadError(Loader& loader, const config::PluginRef& r,
                      sluice_plugin_kind kind = SLUICE_PLUGIN_KIND_FILTER) {
  std::string error;
  EXPECT_EQ(loader.load(r, kind, &error), nullptr) << r.name;
  return error;
}

TEST_F(LoaderTest, NotFoundListsEveryPathTried) {
  std::string error = loadError(*loader_, ref("nowhere"));
  EXPECT_EQ(error.find("/etc/sluice/sluice.yaml:7:9: plugin 'nowhere': not found (tried " +
                       bad_dir_ + "/libnowhere.so, " + bad_dir_ + "/nowhere/libnowhere.so, " +
                       filters_dir_ + "/libnowhere.so, "),
            0u)
      << error;
  EXPECT_NE(error.find(fixtures_dir_ + "/nowhere/libnowhere.so"), std::string::npos) << error;
  config::PluginRef explicit_path = ref("nowhere");
  explicit_path.path = "/no/such/libnowhere.so";
  EXPECT_EQ(loadError(*loader_, explicit_path),
            "/etc/sluice/sluice.yaml:7:9: plugin 'nowhere': not found (tried "
            "/no/such/libnowhere.so)");
}

TEST_F(LoaderTest, RefusesAFileThatIsNoSharedObject) {
  std::string dir = test::testTmpDir();
  ASSERT_TRUE(test::writeFile(dir + "/libgarbage.so", "not an ELF file\n"));
  config::PluginRef r = ref("garbage");
  r.path = dir + "/libgarbage.so";
  std::string error = loadError(*loader_, r);
  EXPECT_EQ(error.find(prefix("garbage", dir) + "cannot be loaded: "), 0u) << error;
}

TEST_F(LoaderTest, RefusesEachBrokenRuleNamingFileLineAndReason) {
  struct Case {
    const char* name;
    std::string reason;
  };
  const std::string abi = std::to_string(SLUICE_ABI_MAJOR) + "." + std::to_string(SLUICE_ABI_MINOR);
  const std::string newer =
      std::to_string(SLUICE_ABI_MAJOR) + "." + std::to_string(SLUICE_ABI_MINOR + 1);
  for (const Case& c : {
           Case{"no_entry", "not a sluice plugin: no sluice_plugin_entry symbol ("},
           Case{"abi_major",
                "ABI major mismatch: plugin built for ABI 2.0, this sluice has ABI " + abi},
           Case{"abi_minor", "built against a newer ABI minor: plugin needs ABI " + newer +
                                 ", this sluice has ABI " + abi +
                                 " (upgrade sluice or rebuild the plugin)"},
           Case{"small_descriptor", "descriptor too small (struct_size 16, need at least " +
                                        std::to_string(sizeof(sluice_plugin_descriptor)) + ")"},
           Case{"wrong_kind",
                "wrong kind: the library is a balancer plugin, the config needs a filter"},
           Case{"name_mismatch",
                "name mismatch: the library calls itself 'someone_else', the config names "
                "'name_mismatch'"},
           Case{"small_hooks", "hook table too small (struct_size 24, need at least 32)"},
           Case{"missing_hook", "required hook 'worker_create' is NULL"},
       }) {
    std::string error = loadError(*loader_, ref(c.name));
    EXPECT_EQ(error.substr(0, prefix(c.name, bad_dir_).size() + c.reason.size()),
              prefix(c.name, bad_dir_) + c.reason);
  }
}

TEST_F(LoaderTest, RefusesAPluginOfAnotherKind) {
  std::string error = loadError(*loader_, ref("round_robin"), SLUICE_PLUGIN_KIND_FILTER);
  EXPECT_EQ(error, prefix("round_robin", balancers_dir_ + "/round_robin") +
                       "wrong kind: the library is a balancer plugin, the config needs a filter");
}

TEST_F(LoaderTest, ReportsThePluginsConfigRefusalAtTheNodeItNamed) {
  std::string error;
  EXPECT_EQ(createFilter(*loader_, ref("refuses_config", "allowed: 3\nunknown: 1\n"), &error),
            nullptr);
  EXPECT_EQ(error, prefix("refuses_config", bad_dir_, "/etc/sluice/sluice.yaml:9:10") +
                       "unknown key 'unknown' (expected one of: allowed)");
  EXPECT_EQ(createFilter(*loader_, ref("refuses_config", "allowed: 11\n"), &error), nullptr);
  EXPECT_EQ(error, prefix("refuses_config", bad_dir_, "/etc/sluice/sluice.yaml:8:10") +
                       "expected an integer from 1 to 10");
  // No position from the plugin: the config block; no config block: the plugin entry.
  EXPECT_EQ(createFilter(*loader_, ref("refuses_config", "  explode: true\n"), &error), nullptr);
  EXPECT_EQ(error, prefix("refuses_config", bad_dir_, "/etc/sluice/sluice.yaml:8:3") +
                       "exploded without a position");
  EXPECT_NE(createFilter(*loader_, ref("refuses_config"), &error), nullptr) << error;
}

TEST_F(LoaderTest, ReadsFieldsBeyondAShortHookTableAsNull) {
  std::string error;
  auto lib = loader_->load(ref("short_table"), SLUICE_PLUGIN_KIND_FILTER, &error);
  ASSERT_NE(lib, nullptr) << error;
  ASSERT_NE(lib->filter(), nullptr);
  EXPECT_NE(lib->filter()->worker_destroy, nullptr);
  EXPECT_EQ(lib->filter()->on_log, nullptr);  // set in the .so, but past its struct_size
  EXPECT_EQ(lib->balancer(), nullptr);
}

TEST_F(LoaderTest, OpensEachFileOnceWhileInUse) {
  std::string error;
  auto a = loader_->load(ref("headers"), SLUICE_PLUGIN_KIND_FILTER, &error);
  auto b = loader_->load(ref("headers"), SLUICE_PLUGIN_KIND_FILTER, &error);
  ASSERT_NE(a, nullptr) << error;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->path(), realPath(filters_dir_ + "/headers/libheaders.so"));
  EXPECT_EQ(a->name(), "headers");
  EXPECT_STREQ(a->descriptor().version, "1.0.0");
  // A cached library still refuses a request for another kind.
  EXPECT_EQ(loader_->load(ref("headers"), SLUICE_PLUGIN_KIND_BALANCER, &error), nullptr);
  EXPECT_NE(error.find("wrong kind"), std::string::npos) << error;
}

TEST_F(LoaderTest, LogsOneTaggedLinePerMessage) {
  std::string error;
  auto lib = loader_->load(ref("headers"), SLUICE_PLUGIN_KIND_FILTER, &error);
  ASSERT_NE(lib, nullptr) << error;
  const sluice_host_api* host = lib->hostApi();
  EXPECT_EQ(host->abi_major, SLUICE_ABI_MAJOR);
  EXPECT_NE(host->filter, nullptr);
  EXPECT_EQ(host->balancer, nullptr);
  ::testing::internal::CaptureStderr();
  const std::string msg = "two\nlines";
  host->log(host->host_ctx, SLUICE_LOG_WARN, msg.data(), msg.size());
  host->log(host->host_ctx, SLUICE_LOG_DEBUG, "hidden", 6);
  setPluginLogLevel(SLUICE_LOG_DEBUG);
  host->log(host->host_ctx, SLUICE_LOG_DEBUG, "shown", 5);
  setPluginLogLevel(SLUICE_LOG_INFO);
  EXPECT_EQ(withoutTimestamps(::testing::internal::GetCapturedStderr()),
            "WARN [main] [plugin headers] two lines\nDEBUG [main] [plugin headers] shown\n");
  uint64_t t0 = host->now_us();
  EXPECT_GE(host->now_us(), t0);
}

}  // namespace
}  // namespace sluice::plugin
