// The path of a plugin author outside this repository, end to end: tools/install_sdk into a temp
// prefix, the example filter (examples/slow_down) copied out of the tree and built there with
// plain g++ and pkg-config (the one-line command of docs/writing-a-filter.md, and its Makefile),
// then the .so named with `path:` in a config of the stock sluice binary: --validate accepts it
// (and reports its config errors with file:line), and requests go through it: paced requests
// are held by its timer and then proxied, early ones are answered 429 with Retry-After; behind
// api_key_auth it paces by the `consumer` that filter put in the request context. Also found
// by name in a plugin_paths folder and listed by `sluice --plugins`.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

// Runs `script` with bash to completion (generous deadline: compiles on a loaded machine).
// Returns the exit code; the output in *out.
int runBash(const std::string& script, std::string* out,
            const std::map<std::string, std::string>& env = {}) {
  Process p({"/bin/bash", "-c", script}, env, "bash");
  int code = p.waitExit(240000);
  *out = p.output();
  return code;
}

// Runs `sluice ARGS...` to completion.
int runSluice(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv{runfile("core/sluice")};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv);
  int code = p.waitExit(30000);
  *out = p.output();
  return code;
}

class OutOfTreeTest : public ::testing::Test {
 protected:
  // Installs the SDK and builds the example twice out of the tree (once per suite).
  static void SetUpTestSuite() {
    root_ = uniqueTmpPath("oot");
    std::string out;
    std::string script =
        "set -eux\n"
        "root='" +
        root_ +
        "'\n"
        "'" +
        runfile("tools/install_sdk") +
        "' --prefix \"$root/prefix\"\n"
        "export PKG_CONFIG_PATH=\"$root/prefix/lib/pkgconfig\"\n"
        "mkdir -p \"$root/gxx\" \"$root/make\"\n"
        "for d in gxx make; do\n"
        "  cp '" +
        runfile("examples/slow_down/slow_down.cc") + "' '" +
        runfile("examples/slow_down/Makefile") +
        "' \"$root/$d/\"\n"
        "done\n"
        "cd \"$root/gxx\"\n"
        "g++ $(pkg-config --cflags --libs sluice-plugin) -shared -fPIC -o libslow_down.so "
        "slow_down.cc\n"
        "make -C \"$root/make\"\n"
        // The same Makefile with clang++ where it is installed (a user's other compiler).
        "if command -v clang++ >/dev/null; then\n"
        "  mkdir -p \"$root/clang\" && cp \"$root/make/slow_down.cc\" \"$root/make/Makefile\" "
        "\"$root/clang/\"\n"
        "  make -C \"$root/clang\" CXX=clang++\n"
        "fi\n";
    build_code_ = runBash(script, &build_log_);
  }

  void SetUp() override { ASSERT_EQ(build_code_, 0) << build_log_; }

  // The builds made: g++ by hand, make (g++), and make with clang++ when it is installed.
  static std::vector<std::string> builds() {
    std::vector<std::string> out{"gxx", "make"};
    if (!readFile(plugin("clang")).empty()) out.push_back("clang");
    return out;
  }
  static std::string plugin(const std::string& how = "gxx") {
    return root_ + "/" + how + "/libslow_down.so";
  }

  static inline std::string root_;
  static inline std::string build_log_;
  static inline int build_code_ = -1;
};

TEST_F(OutOfTreeTest, BuiltSharedObjectExportsOnlyTheEntryPoint) {
  for (const std::string& how : builds()) {
    std::cout << "built with: " << how << "\n";
    std::string out;
    ASSERT_EQ(runBash("nm -D --defined-only '" + plugin(how) + "' | awk '{ print $3 }'", &out), 0)
        << out;
    EXPECT_EQ(out, "sluice_plugin_entry\n") << how;
  }
}

constexpr char kValidate[] = R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: slow_down
        path: ${SO}
        config:
          rate: ${RATE}
routes:
  - prefix: /
    cluster: echo
clusters:
  - name: echo
    endpoints: [127.0.0.1:9]
)";

TEST_F(OutOfTreeTest, StockBinaryValidatesAConfigNamingIt) {
  for (const std::string& how : builds()) {
    TempConfig config(substitute(kValidate, {{"PLUGINS", pluginPathsYaml()},
                                             {"PORT", std::to_string(freePort())},
                                             {"SO", plugin(how)},
                                             {"RATE", "5"}}));
    std::string out;
    EXPECT_EQ(runSluice({"--validate", "-c", config.path()}, &out), 0) << how << ": " << out;
    EXPECT_NE(out.find("OK"), std::string::npos) << out;
  }
}

// Installed into a plugin folder instead of named by `path:`: found by name, and listed by
// `sluice --plugins` with its version and ABI.
TEST_F(OutOfTreeTest, FoundByNameInPluginPathsAndListed) {
  std::string dir = root_ + "/plugins";
  std::string out;
  ASSERT_EQ(runBash("mkdir -p '" + dir + "' && cp '" + plugin() + "' '" + dir + "/'", &out), 0)
      << out;
  std::string yaml = substitute(
      kValidate,
      {{"PLUGINS", "[\"" + dir + "\"]"}, {"PORT", std::to_string(freePort())}, {"RATE", "5"}});
  yaml.erase(yaml.find("        path: ${SO}\n"), std::string("        path: ${SO}\n").size());
  // The cluster's default balancer comes from the folder next to the binary.
  TempConfig config(yaml);
  EXPECT_EQ(runSluice({"--validate", "-c", config.path()}, &out), 0) << out;
  EXPECT_EQ(runSluice({"--plugins", "-c", config.path()}, &out), 0) << out;
  std::regex listed("\\nslow_down +filter +1\\.0\\.0 +" + std::to_string(SLUICE_ABI_MAJOR) + "\\." +
                    std::to_string(SLUICE_ABI_MINOR) + " +" + dir + "/libslow_down\\.so");
  EXPECT_TRUE(std::regex_search(out, listed)) << out;
}

TEST_F(OutOfTreeTest, ItsConfigErrorsNameTheFileAndLine) {
  TempConfig config(substitute(kValidate, {{"PLUGINS", pluginPathsYaml()},
                                           {"PORT", std::to_string(freePort())},
                                           {"SO", plugin()},
                                           {"RATE", "0"}}));
  std::string out;
  EXPECT_EQ(runSluice({"--validate", "-c", config.path()}, &out), 1) << out;
  // "<file>:10:<col>: plugin slow_down: expected a rate ..." (rate: is on line 10).
  EXPECT_NE(out.find(config.path() + ":10:"), std::string::npos) << out;
  EXPECT_NE(out.find("slow_down"), std::string::npos) << out;
  EXPECT_NE(out.find("expected a rate"), std::string::npos) << out;
}

// Two listeners with their own slow_down entry: `paced` holds early requests (one every 2 s, a
// wait of up to 10 s), `strict` refuses them (one every 100 s, no wait).
constexpr char kServe[] = R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: paced
    address: 127.0.0.1:${PORT}
    filters:
      - name: slow_down
        path: ${SO}
        config: { rate: 0.5, max_delay_ms: 10000 }
  - name: strict
    address: 127.0.0.1:${PORT2}
    filters:
      - name: slow_down
        path: ${SO}
        config: { rate: 0.01, max_delay_ms: 0 }
routes:
  - prefix: /
    cluster: echo
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

TEST_F(OutOfTreeTest, RequestsGoThroughItsTimerAndItsLocalReply) {
  EchoBackend backend("echo");
  int port2 = freePort();
  Gateway gateway(
      kServe, {{"SO", plugin()}, {"BACKEND", backend.address()}, {"PORT2", std::to_string(port2)}});
  ASSERT_TRUE(gateway.ready());
  ASSERT_TRUE(gateway.process().waitForPort(port2, 15000)) << gateway.process().outputTail();

  // Back to back on `paced`: the first passes at once; every later one within 2 s of the one
  // before is held until its turn (the timer path) and then proxied. Three in a row cannot all
  // be 2 s apart, so at least one is held, whatever the machine's load.
  int held = 0;
  for (int i = 0; i < 3; ++i) {
    Response r = httpGet(gateway.port(), "/paced/" + std::to_string(i));
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(echoString(r.body, "path"), "/paced/" + std::to_string(i)) << r.body;
    std::string delay = r.header("X-Slow-Down-Delay-Ms");
    if (!delay.empty()) {
      EXPECT_GT(std::stoi(delay), 0);
      EXPECT_LE(std::stoi(delay), 2000);
      ++held;
    }
  }
  EXPECT_GE(held, 1);

  // On `strict` the second request is refused, with a JSON body and Retry-After (~100 s: the
  // caller's next turn).
  Response first = httpGet(port2, "/strict");
  ASSERT_TRUE(first.complete) << first.error;
  EXPECT_EQ(first.status, 200);
  Response second = httpGet(port2, "/strict");
  ASSERT_TRUE(second.complete) << second.error;
  EXPECT_EQ(second.status, 429) << second.body;
  EXPECT_EQ(second.header("Content-Type"), "application/json");
  int retry_after =
      second.header("Retry-After").empty() ? 0 : std::stoi(second.header("Retry-After"));
  EXPECT_GE(retry_after, 50);
  EXPECT_LE(retry_after, 100);
  EXPECT_NE(second.body.find("\"status\":429"), std::string::npos) << second.body;
}

// Behind api_key_auth (a filter of this repository), the out-of-tree filter paces by the
// `consumer` api_key_auth put in the request context: one consumer's early request is refused
// while another consumer passes, and an exempt consumer is never paced.
constexpr char kBehindAuth[] = R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: keyed
    address: 127.0.0.1:${PORT}
    filters:
      - name: api_key_auth
        config:
          keys:
            - { key: key-alice-0001, consumer: alice }
            - { key: key-bob-0002, consumer: bob }
            - { key: key-ops-0003, consumer: ops }
      - name: slow_down
        path: ${SO}
        config: { rate: 0.01, max_delay_ms: 0, exempt_consumers: [ops] }
routes:
  - prefix: /
    cluster: echo
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

TEST_F(OutOfTreeTest, PacesByTheConsumerAnAuthFilterSet) {
  EchoBackend backend("echo");
  Gateway gateway(kBehindAuth, {{"SO", plugin()}, {"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());
  auto get = [&](const std::string& key) {
    return httpGet(gateway.port(), "/", {{"X-Api-Key", key}});
  };
  Response alice = get("key-alice-0001");
  ASSERT_TRUE(alice.complete) << alice.error;
  EXPECT_EQ(alice.status, 200) << alice.body;
  Response alice_again = get("key-alice-0001");
  EXPECT_EQ(alice_again.status, 429) << alice_again.body;
  EXPECT_FALSE(alice_again.header("Retry-After").empty());
  // Same client address, another consumer: its own turn.
  Response bob = get("key-bob-0002");
  EXPECT_EQ(bob.status, 200) << bob.body;
  for (int i = 0; i < 3; ++i) {
    Response ops = get("key-ops-0003");
    EXPECT_EQ(ops.status, 200) << ops.body;
  }
  // Without a key api_key_auth answers first; slow_down never sees the request.
  Response none = httpGet(gateway.port(), "/");
  EXPECT_EQ(none.status, 401) << none.body;
}

}  // namespace
}  // namespace sluice::test
