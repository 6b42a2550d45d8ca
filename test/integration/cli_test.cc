// The command line of the real binary: --validate (OK / file:line:col errors, exit 0/1, the
// listener and admin addresses checked for a bind) and --version.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>

#include "test/harness/sockets.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

// Runs `sluice ARGS...` to completion; returns its exit code, output in *out.
int runSluice(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv{runfile("core/sluice")};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv);
  int code = p.waitExit(20000);
  *out = p.output();
  return code;
}

// Writes `yaml` (with ${PLUGINS} and ${PORT}, a free port, filled in, which keeps line numbers)
// and validates it with `extra` arguments.
int validate(const std::string& yaml, std::string* path, std::string* out,
             const std::vector<std::string>& extra = {}) {
  TempConfig config(
      substitute(yaml, {{"PLUGINS", pluginPathsYaml()}, {"PORT", std::to_string(freePort())}}),
      "validate.yaml");
  *path = config.path();
  std::vector<std::string> args{"--validate", "-c", config.path()};
  args.insert(args.end(), extra.begin(), extra.end());
  return runSluice(args, out);
}

// Escapes `text` for use in a std::regex.
std::string quoteRegex(const std::string& text) {
  return std::regex_replace(text, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
}

// The good config: every plugin kind this issue ships.
constexpr char kGood[] = R"(workers: 2
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
      - request_id
      - name: headers
        config: { response: { add: { X-Served-By: sluice } } }
clusters:
  - name: api
    balancer: { name: random }
    endpoints: [127.0.0.1:2, { address: 127.0.0.1:3, weight: 3 }]
)";

TEST(CliTest, ValidateGoodConfigPrintsOkAndExitsZero) {
  std::string path, out;
  EXPECT_EQ(validate(kGood, &path, &out), 0) << out;
  EXPECT_NE(out.find("OK"), std::string::npos) << out;
}

TEST(CliTest, ValidateReportsAListenerAddressHeldByAnotherProcess) {
  ReusePortListener held;
  std::string path, out;
  std::string yaml = kGood;
  yaml.replace(yaml.find("127.0.0.1:${PORT}"), 17, held.address());
  EXPECT_EQ(validate(yaml, &path, &out), 1) << out;
  std::regex line(quoteRegex(path) + R"(:\d+:\d+: listener 'edge': cannot bind )" +
                  quoteRegex(held.address()) +
                  R"(: address already in use \(held by another process\))");
  EXPECT_TRUE(std::regex_search(out, line)) << out;
  EXPECT_EQ(out.find("OK"), std::string::npos) << out;
  // With the bind check off, the same file is fine (a config for another host, or one a running
  // sluice serves).
  EXPECT_EQ(validate(yaml, &path, &out, {"--no-bind-check"}), 0) << out;
}

TEST(CliTest, ValidateReportsAnAddressNotOnThisHost) {
  std::string path, out;
  std::string yaml = kGood;
  yaml.replace(yaml.find("127.0.0.1:${PORT}"), 17, "192.0.2.1:8080");  // TEST-NET-1
  EXPECT_EQ(validate(yaml, &path, &out), 1) << out;
  EXPECT_NE(out.find("listener 'edge': cannot bind 192.0.2.1:8080: address not available"),
            std::string::npos)
      << out;
}

TEST(CliTest, ValidateReportsAPrivilegedPortAsNonRoot) {
  if (geteuid() == 0) GTEST_SKIP() << "root may bind ports below 1024";
  std::string path, out;
  std::string yaml = kGood;
  yaml.replace(yaml.find("127.0.0.1:${PORT}"), 17, "127.0.0.1:80");
  EXPECT_EQ(validate(yaml, &path, &out), 1) << out;
  EXPECT_NE(out.find("cannot bind 127.0.0.1:80: permission denied"), std::string::npos) << out;
}

TEST(CliTest, ValidateReportsAnAdminAddressHeldByAnotherProcess) {
  ReusePortListener held;
  std::string path, out;
  EXPECT_EQ(validate("admin: { address: " + held.address() + R"( }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
)",
                     &path, &out),
            1)
      << out;
  EXPECT_NE(out.find(path + ":1:19: admin: cannot bind " + held.address() +
                     ": address already in use (held by another process)"),
            std::string::npos)
      << out;
}

TEST(CliTest, ValidateRefusesAListenerOnTheAdminAddress) {
  std::string path, out;
  EXPECT_EQ(validate(R"(admin: { address: 127.0.0.1:${PORT} }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
)",
                     &path, &out, {"--no-bind-check"}),
            1)
      << out;
  EXPECT_NE(out.find(path + ":4:14: listeners[0].address: "), std::string::npos) << out;
  EXPECT_NE(out.find("is taken by the admin listener"), std::string::npos) << out;
}

TEST(CliTest, ValidateReportsUnknownKeyWithFileLineColumn) {
  std::string path, out;
  EXPECT_EQ(validate(R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:1
clusters:
  - name: api
    endpoint: [127.0.0.1:2]
)",
                     &path, &out),
            1);
  EXPECT_NE(out.find(path + ":8:5: "), std::string::npos) << out;
  EXPECT_NE(out.find("unknown key 'endpoint'"), std::string::npos) << out;
  EXPECT_EQ(out.find("OK"), std::string::npos) << out;
}

TEST(CliTest, ValidateReportsUnknownBalancerPluginWithFileLineColumn) {
  std::string path, out;
  EXPECT_EQ(validate(R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:1
clusters:
  - name: api
    balancer: { name: no_such_balancer }
    endpoints: [127.0.0.1:2]
)",
                     &path, &out),
            1);
  std::regex where(std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                   R"(:8:\d+: [^\n]*no_such_balancer)");
  EXPECT_TRUE(std::regex_search(out, where)) << out;
}

TEST(CliTest, ValidateReportsUnknownFilterPluginWithFileLineColumn) {
  std::string path, out;
  EXPECT_EQ(validate(R"(plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:1
    filters:
      - request_id
      - requestid_typo
)",
                     &path, &out),
            1);
  EXPECT_NE(out.find(path + ":7:"), std::string::npos) << out;
  EXPECT_NE(out.find("requestid_typo"), std::string::npos) << out;
}

TEST(CliTest, ValidateReportsAPluginRefusingItsConfig) {
  std::string path, out;
  EXPECT_EQ(validate(R"(plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:1
clusters:
  - name: api
    balancer: { name: round_robin, config: { bogus_setting: 1 } }
    endpoints: [127.0.0.1:2]
)",
                     &path, &out),
            1);
  EXPECT_NE(out.find(path + ":7:"), std::string::npos) << out;
  EXPECT_NE(out.find("bogus_setting"), std::string::npos) << out;
}

TEST(CliTest, ValidateReportsEveryProblem) {
  std::string path, out;
  EXPECT_EQ(validate(R"(workers: lots
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: nowhere
)",
                     &path, &out),
            1);
  EXPECT_NE(out.find(path + ":1:10: "), std::string::npos) << out;
  EXPECT_NE(out.find(path + ":5:14: "), std::string::npos) << out;
}

TEST(CliTest, ValidateReportsYamlSyntaxErrorWithFileLineColumn) {
  std::string path, out;
  EXPECT_EQ(validate("listeners:\n  - name: [unclosed\n", &path, &out), 1);
  std::regex where(std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                   R"(:\d+:\d+: )");
  EXPECT_TRUE(std::regex_search(out, where)) << out;
}

TEST(CliTest, ValidateMissingFileExitsOne) {
  std::string out;
  EXPECT_EQ(runSluice({"--validate", "-c", testTmpDir() + "/does-not-exist.yaml"}, &out), 1);
  EXPECT_NE(out.find("does-not-exist.yaml"), std::string::npos) << out;
}

TEST(CliTest, ServingABadConfigExitsOneWithTheSameReport) {
  TempConfig config(substitute(R"(plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:1
clusters:
  - name: api
    balancer: no_such_balancer
    endpoints: [127.0.0.1:2]
)",
                               {{"PLUGINS", pluginPathsYaml()}}),
                    "serve-bad.yaml");
  std::string out;
  EXPECT_EQ(runSluice({"-c", config.path()}, &out), 1);
  EXPECT_NE(out.find(config.path() + ":7:"), std::string::npos) << out;
  EXPECT_NE(out.find("no_such_balancer"), std::string::npos) << out;
}

TEST(CliTest, VersionPrintsTheVersion) {
  std::string out;
  EXPECT_EQ(runSluice({"--version"}, &out), 0);
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(^sluice \d+\.\d+\.\d+)"))) << out;
  EXPECT_NE(out.find("plugin ABI"), std::string::npos) << out;
}

}  // namespace
}  // namespace sluice::test
