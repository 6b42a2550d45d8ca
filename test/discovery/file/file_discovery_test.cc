// The `file` discovery plugin's config and its poller thread, called directly (no dlopen), plus
// one pass through the plugin's C hook table as the core calls it.
#include "discovery/file/file_discovery.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "core/api/discovery.h"
#include "core/plugin/config_node.h"
#include "test/core/plugin/testing/yaml_config.h"
#include "test/discovery/testing/recording_host.h"
#include "test/harness/env.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::discovery {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Builds the config from `yaml`; on refusal returns nullopt and sets *error to "L:C: message".
std::optional<FileDiscoveryConfig> configFrom(const std::string& yaml, std::string* error) {
  try {
    return FileDiscoveryConfig(testing::YamlConfig(yaml).node());
  } catch (const sdk::ConfigError& e) {
    *error = std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.what();
    return std::nullopt;
  }
}

std::string goodFile(const std::string& restapi = "127.0.0.1:9001") {
  std::string path = test::uniqueTmpPath("endpoints.yaml");
  EXPECT_TRUE(test::writeFile(path, "clusters: {restapi: [" + restapi + "]}\n"));
  return path;
}

TEST(FileDiscoveryConfigTest, Defaults) {
  std::string path = goodFile();
  std::string error;
  auto config = configFrom("path: " + path, &error);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_EQ(config->path, path);
  EXPECT_EQ(config->interval_ms, 1000);
  EXPECT_FALSE(config->optional);
}

TEST(FileDiscoveryConfigTest, UnknownKeyIsRefusedWithLineAndColumn) {
  std::string error;
  EXPECT_FALSE(configFrom("path: " + goodFile() + "\ninterval: 100\n", &error).has_value());
  EXPECT_EQ(error, "2:11: unknown key 'interval' (expected one of: path, interval_ms, optional)");
}

TEST(FileDiscoveryConfigTest, PathIsRequired) {
  std::string error;
  EXPECT_FALSE(configFrom("", &error).has_value());
  EXPECT_NE(error.find("missing key 'path'"), std::string::npos) << error;
  EXPECT_FALSE(configFrom("interval_ms: 100", &error).has_value());
  EXPECT_NE(error.find("missing key 'path'"), std::string::npos) << error;
  EXPECT_FALSE(configFrom("path: ''", &error).has_value());
  EXPECT_NE(error.find("expected a file name"), std::string::npos) << error;
  EXPECT_FALSE(configFrom("path: [a]", &error).has_value());
  EXPECT_EQ(error, "1:7: expected a string");
}

TEST(FileDiscoveryConfigTest, IntervalBounds) {
  std::string path = goodFile();
  std::string error;
  EXPECT_FALSE(configFrom("path: " + path + "\ninterval_ms: 49", &error).has_value());
  EXPECT_EQ(error, "2:14: expected an integer from 50 to 3600000");
  auto config = configFrom("path: " + path + "\ninterval_ms: 50", &error);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_EQ(config->interval_ms, 50);
}

TEST(FileDiscoveryConfigTest, MissingFileIsRefusedUnlessOptional) {
  std::string path = test::uniqueTmpPath("absent.yaml");
  std::string error;
  EXPECT_FALSE(configFrom("path: " + path, &error).has_value());
  EXPECT_EQ(error, "1:7: endpoints file '" + path +
                       "': No such file or directory (set optional: true to start without it)");
  auto config = configFrom("path: " + path + "\noptional: true", &error);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_TRUE(config->optional);
}

TEST(FileDiscoveryConfigTest, BrokenFileIsRefusedAtConfigTime) {
  std::string path = test::uniqueTmpPath("broken.yaml");
  ASSERT_TRUE(test::writeFile(path, "clusters:\n  restapi: [127.0.0.1:0, h:1, h:1]\n"));
  std::string error;
  EXPECT_FALSE(configFrom("path: " + path + "\noptional: true", &error).has_value());
  EXPECT_EQ(error, "1:7: endpoints file refused: " + path +
                       ":2:13: invalid address '127.0.0.1:0': bad port '0' (expected "
                       "1..65535) (and 1 more errors)");
}

TEST(FileDiscoveryConfigTest, RelativePathIsRelativeToTheWorkingDirectory) {
  char old[4096];
  ASSERT_NE(getcwd(old, sizeof old), nullptr);
  std::string dir = test::testTmpDir();
  ASSERT_TRUE(test::writeFile(dir + "/relative.yaml", "clusters: {}\n"));
  ASSERT_EQ(chdir(dir.c_str()), 0);
  std::string error;
  auto config = configFrom("path: relative.yaml", &error);
  ASSERT_EQ(chdir(old), 0);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_EQ(config->path, dir + "/relative.yaml");
}

class FileDiscoveryTest : public ::testing::Test {
 protected:
  FileDiscoveryConfig makeConfig(const std::string& path, int interval_ms) {
    std::string error;
    auto config =
        configFrom("path: " + path + "\ninterval_ms: " + std::to_string(interval_ms), &error);
    EXPECT_TRUE(config.has_value()) << error;
    return *config;
  }
  testing::RecordingHost rec_;
};

TEST_F(FileDiscoveryTest, StartPublishesAtOnceThenFollowsTheFile) {
  std::string path = goodFile("127.0.0.1:9001");
  FileDiscoveryConfig config = makeConfig(path, 50);
  FileDiscovery discovery(config, rec_.host());
  ASSERT_TRUE(discovery.start(rec_.sink()));
  ASSERT_EQ(rec_.publishCount(), 1u);  // before start() returned
  EXPECT_EQ(rec_.published()[0].at("restapi"), std::vector<std::string>{"127.0.0.1:9001"});

  ASSERT_TRUE(
      test::writeFile(path,
                      "clusters:\n  restapi: [{address: 127.0.0.1:9002, weight: 3, zone: z1, "
                      "metadata: {v: '2'}}]\n  billing: []\n"));
  ASSERT_TRUE(rec_.waitForPublish(1, milliseconds(10000)));
  auto second = rec_.published()[1];
  EXPECT_EQ(second.at("restapi"), std::vector<std::string>{"127.0.0.1:9002 w=3 zone=z1 v=2"});
  EXPECT_TRUE(second.at("billing").empty());

  // A broken file publishes nothing; the next good one does.
  ASSERT_TRUE(test::writeFile(path, "clusters:\n  restapi: [127.0.0.1]\n"));
  auto deadline = Clock::now() + milliseconds(10000);
  while (rec_.countLogs(path + ":2:13: invalid address") == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(rec_.countLogs(path + ":2:13: invalid address"), 1u);
  EXPECT_EQ(rec_.publishCount(), 2u);
  ASSERT_TRUE(test::writeFile(path, "clusters: {restapi: [127.0.0.1:9003]}\n"));
  ASSERT_TRUE(rec_.waitForPublish(2, milliseconds(10000)));
  EXPECT_EQ(rec_.published()[2].at("restapi"), std::vector<std::string>{"127.0.0.1:9003"});
  EXPECT_EQ(rec_.published()[2].count("billing"), 0u);
  discovery.stop();
}

TEST_F(FileDiscoveryTest, StopIsPromptWhateverTheInterval) {
  FileDiscoveryConfig config = makeConfig(goodFile(), 3600 * 1000);
  FileDiscovery discovery(config, rec_.host());
  ASSERT_TRUE(discovery.start(rec_.sink()));
  std::this_thread::sleep_for(milliseconds(50));  // let the thread reach its wait
  auto before = Clock::now();
  discovery.stop();
  // An hour if stop waited for the interval; a condition variable makes it immediate.
  EXPECT_LT(Clock::now() - before, std::chrono::seconds(5));
}

TEST_F(FileDiscoveryTest, NothingIsPublishedAfterStop) {
  std::string path = goodFile();
  FileDiscoveryConfig config = makeConfig(path, 50);
  FileDiscovery discovery(config, rec_.host());
  ASSERT_TRUE(discovery.start(rec_.sink()));
  discovery.stop();
  size_t count = rec_.publishCount();
  ASSERT_TRUE(test::writeFile(path, "clusters: {restapi: [127.0.0.1:9009]}\n"));
  EXPECT_FALSE(rec_.waitForPublish(count, milliseconds(300)));
  discovery.stop();  // a second stop is harmless
}

TEST_F(FileDiscoveryTest, OptionalMissingFileIsPublishedWhenItAppears) {
  std::string path = test::uniqueTmpPath("later.yaml");
  std::string error;
  auto config = configFrom("path: " + path + "\ninterval_ms: 50\noptional: true", &error);
  ASSERT_TRUE(config.has_value()) << error;
  FileDiscovery discovery(*config, rec_.host());
  ASSERT_TRUE(discovery.start(rec_.sink()));
  EXPECT_EQ(rec_.publishCount(), 0u);
  ASSERT_TRUE(test::writeFile(path, "clusters: {late: [127.0.0.1:9001]}\n"));
  ASSERT_TRUE(rec_.waitForPublish(0, milliseconds(10000)));
  EXPECT_EQ(rec_.published()[0].count("late"), 1u);
  discovery.stop();
}

// The C hook table, driven as the core drives it: config_create (errors with line/column),
// start with a sink, stop, config_destroy.
TEST_F(FileDiscoveryTest, ThroughTheCHookTable) {
  const sluice_plugin_descriptor* d = sluice_plugin_entry();
  ASSERT_EQ(d->kind, SLUICE_PLUGIN_KIND_DISCOVERY);
  EXPECT_STREQ(d->name, "file");
  const auto* hooks = static_cast<const sluice_discovery_plugin*>(d->hooks);
  const sluice_host_api* host = rec_.raw(plugin::configApi());

  char message[256];
  sluice_error err{message, sizeof message, 0, 0};
  testing::YamlConfig bad("path: /nonexistent/endpoints.yaml\n");
  EXPECT_EQ(hooks->config_create(host, bad.raw(), &err), nullptr);
  EXPECT_EQ(std::string(message),
            "endpoints file '/nonexistent/endpoints.yaml': No such file or directory (set "
            "optional: true to start without it)");
  EXPECT_EQ(err.line, 1u);
  EXPECT_EQ(err.column, 7u);

  testing::YamlConfig good("path: " + goodFile() + "\ninterval_ms: 50\n");
  void* config = hooks->config_create(host, good.raw(), &err);
  ASSERT_NE(config, nullptr) << message;
  ASSERT_EQ(hooks->start(config, rec_.sinkHandle()), 0);
  EXPECT_EQ(rec_.publishCount(), 1u);
  hooks->stop(config);
  hooks->config_destroy(config);
}

}  // namespace
}  // namespace sluice::discovery
