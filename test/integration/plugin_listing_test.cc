// What the real binary says about plugins: `sluice --plugins` (every plugin in plugin_paths
// and next to the binary, with kind, version, ABI and file), a plugin that is not found (where
// it looked, in the words of how sluice was started, what is there, the closest name), a file
// that is no plugin (named as configured), and the admin /plugins view (loaded plugins, their
// ABI and who uses them).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <regex>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

int runBinary(const std::string& binary, const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv);
  int code = p.waitExit(20000);
  *out = p.output();
  return code;
}

TEST(PluginListingTest, PluginsFlagListsEveryPluginWithKindVersionAbiAndFile) {
  TempConfig config(
      "plugin_paths: " + pluginPathsYaml() + "\nlisteners: [{name: e, address: 127.0.0.1:1}]\n",
      "plugins.yaml");
  std::string out;
  ASSERT_EQ(runBinary(runfile("core/sluice"), {"--plugins", "-c", config.path()}, &out), 0) << out;
  // One line per plugin: NAME KIND VERSION ABI FILE.
  EXPECT_TRUE(std::regex_search(
      out, std::regex("\nheaders +filter +1\\.0\\.0 +1\\.[0-9]+ +/[^\n]*/libheaders\\.so\n")))
      << out;
  EXPECT_TRUE(std::regex_search(
      out,
      std::regex("\nround_robin +balancer +[0-9.]+ +1\\.[0-9]+ +/[^\n]*libround_robin\\.so\n")))
      << out;
  EXPECT_NE(out.find(runfile("filters") + "  (plugin_paths)"), std::string::npos) << out;
  EXPECT_NE(out.find("(next to the binary)"), std::string::npos) << out;
  EXPECT_NE(out.find("this sluice has plugin ABI 1."), std::string::npos) << out;

  // Without -c: the embedded config (no plugin_paths), the folders next to the binary.
  ASSERT_EQ(runBinary(runfile("core/sluice"), {"--plugins"}, &out), 0) << out;
  EXPECT_NE(out.find("request_id"), std::string::npos) << out;
}

// sluice started as DIR/bin/sluice (a symbolic link to the build output, as bazel-bin is):
// the folder next to the binary is DIR/filters, named so — not where the link leads.
TEST(PluginListingTest, NotFoundNamesTheFolderNextToTheBinaryAsStartedAndSuggestsAName) {
  const std::string dir = uniqueTmpPath("install");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/bin").c_str(), 0755), 0);
  ASSERT_EQ(::symlink(runfile("core/sluice").c_str(), (dir + "/bin/sluice").c_str()), 0);
  ASSERT_EQ(::symlink(runfile("filters").c_str(), (dir + "/filters").c_str()), 0);
  ASSERT_TRUE(writeFile(dir + "/not-a-plugin.so", "#!/bin/sh\n"));
  TempConfig config(
      "listeners:\n"
      "  - name: e\n"
      "    address: 127.0.0.1:1\n"
      "    filters: [heders, {name: x, path: " +
          dir + "/not-a-plugin.so}]\n",
      "typo.yaml");
  std::string out;
  EXPECT_EQ(
      runBinary(dir + "/bin/sluice", {"--validate", "--no-bind-check", "-c", config.path()}, &out),
      1);
  EXPECT_NE(out.find(config.path() +
                     ":4:15: plugin 'heders': not found: looked for libheders.so and "
                     "heders/libheders.so in plugin_paths (none configured) and in the filters "
                     "folder next to the sluice binary (" +
                     dir + "/filters); filter plugins there: "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("did you mean 'headers'?"), std::string::npos) << out;
  EXPECT_NE(out.find(config.path() + ":4:23: plugin 'x' (" + dir +
                     "/not-a-plugin.so): not a sluice plugin: not an ELF shared object"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("sluice-plugin-"), std::string::npos) << "the private copy leaked:\n" << out;
}

constexpr char kGateway[] = R"(
workers: 1
admin: {address: 127.0.0.1:${ADMIN}}
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters: [headers]
clusters:
  - name: echo
    endpoints: [127.0.0.1:1]
routes:
  - name: api
    prefix: /api
    cluster: echo
    filters: [request_id]
)";

TEST(PluginListingTest, AdminPluginsShowsAbiFileAndWhoUsesEachPlugin) {
  Gateway gateway(kGateway);
  ASSERT_TRUE(gateway.ready());
  Response r = httpGet(gateway.adminPort(), "/plugins");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(std::regex_search(
      r.body, std::regex("\"name\": \"headers\", \"kind\": \"filter\", \"version\": \"1\\.0\\.0\", "
                         "\"abi\": \"1\\.[0-9]+\", \"file\": \"[^\"]*/libheaders\\.so\", "
                         "\"content_hash\": \"fnv1a64:[0-9a-f]{16}\", \"used_by\": "
                         "\\[\"listener edge\"\\]")))
      << r.body;
  EXPECT_NE(r.body.find("\"name\": \"request_id\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"used_by\": [\"route api on listener edge\"]"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("\"used_by\": [\"cluster echo\"]"), std::string::npos) << r.body;
  EXPECT_TRUE(std::regex_search(r.body, std::regex("\"host_abi\": \"1\\.[0-9]+\"\\}"))) << r.body;
}

}  // namespace
}  // namespace sluice::test
