// Loader refusals, each with a real purpose-made .so: the message names the config file and
// line, the .so file, and the reason.
#include <gtest/gtest.h>

#include <limits.h>
#include <unistd.h>

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

TEST_F(LoaderTest, NotFoundSaysWhereItLookedWhatIsThereAndTheClosestName) {
  std::string error = loadError(*loader_, ref("heders"));
  EXPECT_EQ(error.find("/etc/sluice/sluice.yaml:7:9: plugin 'heders': not found: looked for "
                       "libheders.so and heders/libheders.so in plugin_paths (" +
                       bad_dir_ + ", " + filters_dir_ + ", " + balancers_dir_ + ", " +
                       fixtures_dir_ + ") and in the filters folder next to the sluice binary ("),
            0u)
      << error;
  // Only filters are listed (not the balancers in the same paths), each once.
  EXPECT_NE(error.find("; filter plugins there: "), std::string::npos) << error;
  EXPECT_NE(error.find("headers, "), std::string::npos) << error;
  EXPECT_NE(error.find("request_id"), std::string::npos) << error;
  EXPECT_EQ(error.find("round_robin"), std::string::npos) << error;
  EXPECT_NE(error.find("; did you mean 'headers'?"), std::string::npos) << error;
  EXPECT_EQ(error.find("/sluice-plugin-"), std::string::npos) << "a private copy leaked: " << error;

  std::string balancer = loadError(*loader_, ref("round_robn"), SLUICE_PLUGIN_KIND_BALANCER);
  EXPECT_NE(balancer.find("in the balancers folder next to the sluice binary"), std::string::npos)
      << balancer;
  EXPECT_NE(balancer.find("did you mean 'round_robin'?"), std::string::npos) << balancer;
  EXPECT_EQ(balancer.find("headers"), std::string::npos) << balancer;
}

TEST_F(LoaderTest, NotFoundSuggestsNothingFarFromEveryName) {
  std::string error = loadError(*loader_, ref("completely_unrelated"));
  EXPECT_NE(error.find("filter plugins there: "), std::string::npos) << error;
  EXPECT_EQ(error.find("did you mean"), std::string::npos) << error;
}

TEST_F(LoaderTest, NotFoundWithNoPluginPathsSaysSo) {
  Loader bare({}, HostTables{});
  std::string error = loadError(bare, ref("headerz"));
  EXPECT_NE(error.find("in plugin_paths (none configured) and in the filters folder next to the "
                       "sluice binary ("),
            std::string::npos)
      << error;
}

TEST_F(LoaderTest, NotFoundAtAnExplicitPathNamesThatFile) {
  config::PluginRef explicit_path = ref("nowhere");
  explicit_path.path = "/no/such/libnowhere.so";
  EXPECT_EQ(loadError(*loader_, explicit_path),
            "/etc/sluice/sluice.yaml:7:9: plugin 'nowhere': not found: no file "
            "/no/such/libnowhere.so (the entry's path:)");
}

TEST_F(LoaderTest, TheFolderNextToTheBinaryIsNamedAsTheBinaryWasStarted) {
  // bazel-bin/core/sluice started from the workspace: bazel-bin/filters, made absolute against
  // the working directory, not the build cache that bazel-bin links to.
  char cwd[PATH_MAX];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  setExecutablePath("bazel-bin/core/./sluice");
  EXPECT_EQ(builtinPluginDir(SLUICE_PLUGIN_KIND_FILTER), std::string(cwd) + "/bazel-bin/filters");
  EXPECT_EQ(builtinPluginDir(SLUICE_PLUGIN_KIND_BALANCER),
            std::string(cwd) + "/bazel-bin/balancers");
  EXPECT_EQ(builtinPluginDir(SLUICE_PLUGIN_KIND_DISCOVERY),
            std::string(cwd) + "/bazel-bin/discovery");
  setExecutablePath("/opt/sluice/bin/sluice");
  EXPECT_EQ(builtinPluginDir(SLUICE_PLUGIN_KIND_FILTER), "/opt/sluice/filters");
  std::string error = loadError(*loader_, ref("heders"));
  EXPECT_NE(error.find("in the filters folder next to the sluice binary (/opt/sluice/filters)"),
            std::string::npos)
      << error;
  setExecutablePath("");
}

TEST_F(LoaderTest, RefusesAFileThatIsNoSharedObjectNamingTheUsersFile) {
  std::string dir = test::testTmpDir();
  ASSERT_TRUE(test::writeFile(dir + "/libgarbage.so", "not an ELF file\n"));
  config::PluginRef r = ref("garbage");
  r.path = dir + "/libgarbage.so";
  std::string error = loadError(*loader_, r);
  EXPECT_EQ(error, prefix("garbage", dir) +
                       "not a sluice plugin: not an ELF shared object (a plugin is a .so built "
                       "against sluice's core/api headers, see docs/writing-a-filter.md)");
}

TEST_F(LoaderTest, DlopenAndDlsymErrorsNameTheUsersFileNotThePrivateCopy) {
  // An ELF file that is no shared object: dlopen() refuses the private copy; the message names
  // the user's file.
  std::string dir = test::testTmpDir();
  std::string elf = std::string(
                        "\x7f"
                        "ELF") +
                    std::string(60, '\0');
  ASSERT_TRUE(test::writeFile(dir + "/libhalf.so", elf));
  config::PluginRef half = ref("half");
  half.path = dir + "/libhalf.so";
  std::string error = loadError(*loader_, half);
  EXPECT_EQ(error.find(prefix("half", dir) + "cannot be loaded: "), 0u) << error;
  EXPECT_EQ(error.find("/sluice-plugin-"), std::string::npos) << error;
  // No entry symbol: dlerror() names the copy it looked in; the message names the user's file.
  error = loadError(*loader_, ref("no_entry"));
  EXPECT_EQ(
      error.find(prefix("no_entry", bad_dir_) + "not a sluice plugin: no sluice_plugin_entry"), 0u)
      << error;
  EXPECT_EQ(error.find("/sluice-plugin-"), std::string::npos) << error;
  EXPECT_EQ(error.find("-libno_entry.so"), std::string::npos) << error;
}

TEST_F(LoaderTest, ScanListsThePluginsInAFolderWithKindVersionAndAbi) {
  std::vector<PluginFile> found = scanPlugins({filters_dir_, balancers_dir_, bad_dir_});
  bool headers = false, round_robin = false;
  for (const PluginFile& p : found) {
    EXPECT_NE(p.file.find("/lib"), std::string::npos) << p.file;
    if (p.name == "headers") {
      headers = true;
      EXPECT_EQ(p.kind, "filter");
      EXPECT_EQ(p.version, "1.0.0");
      EXPECT_EQ(p.abi_major, static_cast<uint32_t>(SLUICE_ABI_MAJOR));
      EXPECT_EQ(p.file, filters_dir_ + "/headers/libheaders.so");
    }
    if (p.name == "round_robin") {
      round_robin = true;
      EXPECT_EQ(p.kind, "balancer");
    }
    EXPECT_NE(p.name, "no_entry") << "a file without the entry symbol is no plugin";
  }
  EXPECT_TRUE(headers);
  EXPECT_TRUE(round_robin);
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
  EXPECT_EQ(a->path(), filters_dir_ + "/headers/libheaders.so");
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
