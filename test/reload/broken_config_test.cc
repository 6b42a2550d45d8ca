// Broken configs reloaded under load change nothing: a YAML syntax error, an unknown key, and
// plugins that refuse their config (a balancer and a filter). Clients see no failure and the old
// behaviour; POST /reload answers 400 naming file:line:col; GET /config keeps the old version and
// text and shows the refusal; /stats counts it. A good config afterwards applies as usual.
#include <gtest/gtest.h>

#include <regex>

#include "test/reload/reload_fixture.h"

namespace sluice::test {
namespace {

constexpr char kGood[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: headers
        config: { response: { set: { X-Config: ${TAG} } } }
clusters:
  - name: svc
    balancer: { name: ${BALANCER} }
    endpoints: [${A}, ${B}]
)";

struct Broken {
  const char* what;
  std::string yaml;
};

// Each is kGood with version "v2" and balancer random, broken in one place.
std::vector<Broken> brokenConfigs() {
  auto v2 = [](std::string text) {
    return substitute(text, {{"TAG", "v2"}, {"BALANCER", "random"}});
  };
  std::string good = v2(kGood);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  return {
      {"YAML syntax error", replace("endpoints: [${A}, ${B}]", "endpoints: [${A}, ${B}")},
      {"unknown key", replace("    endpoints:", "    endpoint_list: [${A}]\n    endpoints:")},
      {"balancer refuses its config",
       replace("{ name: random }", "{ name: round_robin, config: { bogus: 1 } }")},
      {"filter refuses its config", replace("X-Config: v2", "Content-Length: 7")},
      {"unknown plugin", replace("{ name: random }", "{ name: no_such_balancer }")},
  };
}

TEST(BrokenConfigTest, RefusedUnderLoadWithNothingChanged) {
  EchoBackend a("a"), b("b");
  std::map<std::string, std::string> vars{
      {"A", a.address()}, {"B", b.address()}, {"TAG", "v1"}, {"BALANCER", "round_robin"}};
  ReloadGateway gateway(kGood, vars);
  ASSERT_TRUE(gateway.ready());
  const std::string config_before = adminGet(gateway.adminPort(), "/config");
  const std::regex sha("\"sha256\": \"([0-9a-f]{64})\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(config_before, m, sha)) << config_before;
  const std::string sha_before = m[1];

  LoadClients load(gateway.port(), 4, "/svc/load");
  load.watchHeader("X-Config");
  ASSERT_TRUE(load.waitResponses(100));
  // "PATH:LINE:COL: " somewhere in a JSON answer.
  auto hasPosition = [&](const std::string& body) {
    const std::string prefix = "\"" + gateway.configPath() + ":";
    for (size_t at = body.find(prefix); at != std::string::npos; at = body.find(prefix, at + 1)) {
      if (std::regex_search(body.substr(at + prefix.size(), 16), std::regex("^[0-9]+:[0-9]+: "))) {
        return true;
      }
    }
    return false;
  };
  uint64_t failed = 0;
  for (const Broken& broken : brokenConfigs()) {
    SCOPED_TRACE(broken.what);
    ASSERT_TRUE(gateway.rewrite(broken.yaml, vars));
    Response r = gateway.adminReload();
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(r.body.find("\"ok\": false"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("\"version\": 1"), std::string::npos) << r.body;
    EXPECT_TRUE(hasPosition(r.body)) << "no file:line:col in " << r.body;
    ++failed;

    std::string config = adminGet(gateway.adminPort(), "/config");
    EXPECT_NE(config.find("\"version\": 1,"), std::string::npos) << config;
    ASSERT_TRUE(std::regex_search(config, m, sha));
    EXPECT_EQ(m[1], sha_before) << "GET /config must show the running (old) text";
    EXPECT_NE(config.find("X-Config: v1"), std::string::npos);
    EXPECT_NE(config.find("\"last_reload\": {"), std::string::npos) << config;
    EXPECT_NE(config.find("\"ok\": false"), std::string::npos) << config;
    EXPECT_TRUE(hasPosition(config)) << "last_reload without the error: " << config;
    EXPECT_NE(config.find("\"reloads_failed\": " + std::to_string(failed) + ","),
              std::string::npos);

    // The same file by SIGHUP: refused and counted too, and logged with its position.
    gateway.process().signal(SIGHUP);
    ++failed;
    EXPECT_TRUE(gateway.waitStat("reloads_failed", failed));
    EXPECT_TRUE(load.waitResponses(200));
    EXPECT_EQ(clusterStat(gateway.adminPort(), "svc").balancer, "round_robin");
    EXPECT_EQ(httpGet(gateway.port(), "/svc/x").header("X-Config"), "v1");
  }
  EXPECT_TRUE(gateway.process().waitForOutput("refused; still serving config version 1"));

  // A good config still applies afterwards.
  vars["TAG"] = "v2";
  ASSERT_TRUE(gateway.rewrite(kGood, vars));
  ASSERT_EQ(gateway.reload(Trigger::kAdmin), 2u);
  EXPECT_TRUE(load.waitResponses(200));
  load.stop();
  EXPECT_EQ(load.failures(), 0u) << ::testing::PrintToString(load.failureSamples());
  std::map<std::string, uint64_t> seen = load.headerValues();
  EXPECT_GT(seen["v1"], 0u);
  EXPECT_GT(seen["v2"], 0u);
  EXPECT_EQ(seen["v1"] + seen["v2"], load.okSinceWatch())
      << "a response without the header or another tag";
  std::map<std::string, uint64_t> stats = adminStats(gateway.adminPort());
  EXPECT_EQ(stats["config_version"], 2u);
  EXPECT_EQ(stats["reloads_ok"], 1u);
  EXPECT_EQ(stats["reloads_failed"], failed);
  EXPECT_NE(adminGet(gateway.adminPort(), "/config").find("\"last_reload\": {\"at\""),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::test
