// The admin listener's operator endpoints on a running sluice: /healthz, /plugins, POST /drain,
// and the bearer token from admin.token_file that every POST needs (GETs stay open).
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "test/harness/harness.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kToken[] = "t0ken-for-tests";

const char* kConfig = R"(
workers: 1
admin: {address: 127.0.0.1:${ADMIN}, token_file: ${TOKEN}}
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters: [request_id]
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

class AdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    token_path_ = uniqueTmpPath("admin.token");
    ASSERT_TRUE(writeFile(token_path_, std::string(kToken) + "\n"));  // the newline is trimmed
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"BACKEND", backend_.address()},
                                                    {"TOKEN", token_path_}});
    ASSERT_TRUE(gateway_->ready());
  }
  int admin() const { return gateway_->adminPort(); }

  EchoBackend backend_{"echo"};
  std::string token_path_;
  std::unique_ptr<Gateway> gateway_;
};

TEST_F(AdminTest, PostNeedsTheBearerTokenGetsStayOpen) {
  Response none = httpRequest(admin(), "POST", "/reload");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.header("WWW-Authenticate").rfind("Bearer", 0), 0u)
      << none.header("WWW-Authenticate");
  EXPECT_EQ(httpRequest(admin(), "POST", "/reload", {{"Authorization", "Bearer wrong"}}).status,
            401);
  EXPECT_EQ(httpRequest(admin(), "POST", "/reload",
                        {{"Authorization", std::string("Bearer ") + kToken + "x"}})
                .status,
            401);
  EXPECT_EQ(
      httpRequest(admin(), "POST", "/reload", {{"Authorization", std::string("Basic ") + kToken}})
          .status,
      401);
  EXPECT_EQ(httpRequest(admin(), "POST", "/drain").status, 401);
  EXPECT_EQ(gateway_->process().running(), true);

  Response ok =
      httpRequest(admin(), "POST", "/reload", {{"Authorization", std::string("Bearer ") + kToken}});
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_NE(ok.body.find("\"ok\": true"), std::string::npos) << ok.body;

  EXPECT_EQ(httpGet(admin(), "/stats").status, 200);
  EXPECT_EQ(httpGet(admin(), "/stats/prometheus").status, 200);
  EXPECT_EQ(httpGet(admin(), "/config").status, 200);
}

TEST_F(AdminTest, BrowserForgeriesAreRefused) {
  const std::string self = "127.0.0.1:" + std::to_string(admin());
  const std::string bearer = std::string("Bearer ") + kToken;
  // DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1.
  Response rebound = httpRequest(admin(), "GET", "/config", {{"Host", "evil.example:9901"}});
  EXPECT_EQ(rebound.status, 403);
  EXPECT_EQ(rebound.body.find("admin_token"), std::string::npos);
  EXPECT_EQ(httpRequest(admin(), "GET", "/stats", {{"Host", self}}).status, 200);
  EXPECT_EQ(httpRequest(admin(), "GET", "/stats", {{"Host", "localhost:9901"}}).status, 200);
  EXPECT_EQ(httpRequest(admin(), "GET", "/stats", {{"Host", "[::1]:9901"}}).status, 200);
  // Cross-site request forgery: even with the token (a browser may hold it), a POST from
  // another origin is refused; the admin's own page (same origin) may POST.
  Response forged =
      httpRequest(admin(), "POST", "/drain",
                  {{"Host", self}, {"Origin", "http://evil.example"}, {"Authorization", bearer}});
  EXPECT_EQ(forged.status, 403);
  EXPECT_TRUE(gateway_->process().running());
  Response same =
      httpRequest(admin(), "POST", "/reload?dry_run=1",
                  {{"Host", self}, {"Origin", "http://" + self}, {"Authorization", bearer}});
  EXPECT_EQ(same.status, 200) << same.body;
}

TEST_F(AdminTest, HealthzAnswersWhileTheLoopRuns) {
  Response r = httpGet(admin(), "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
}

TEST_F(AdminTest, PluginsListsLoadedPluginsWithAbiFileAndHash) {
  Response r = httpGet(admin(), "/plugins");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  const std::string abi = "\"abi\": \"1.";  // major 1, the minor each was built against
  for (const char* p : {"\"name\": \"request_id\", \"kind\": \"filter\"",
                        "\"name\": \"round_robin\", \"kind\": \"balancer\"", "librequest_id.so\"",
                        "\"content_hash\": \"fnv1a64:", "\"version\": \"", abi.c_str()}) {
    EXPECT_NE(r.body.find(p), std::string::npos) << p << " in " << r.body;
  }
}

// POST /drain drains as SIGTERM does but keeps the process (and its admin endpoint) up, so a
// load balancer in front sees /ready 503 and the operator decides when to stop it.
TEST_F(AdminTest, PostDrainDrainsWithoutExitingUntilSigterm) {
  EXPECT_EQ(httpGet(admin(), "/drain").status, 405);  // GET does not drain
  ASSERT_EQ(httpGet(gateway_->port(), "/gateway/echo/x").status, 200);
  Response r =
      httpRequest(admin(), "POST", "/drain", {{"Authorization", std::string("Bearer ") + kToken}});
  EXPECT_EQ(r.status, 202);
  EXPECT_NE(r.body.find("\"draining\": true"), std::string::npos) << r.body;
  EXPECT_TRUE(gateway_->process().waitForOutput("POST /drain: draining", 5000));
  EXPECT_TRUE(gateway_->process().waitForOutput("staying up (POST /drain)", 5000))
      << gateway_->process().outputTail();
  // Still running, answering the admin endpoint; the listener refuses connections.
  EXPECT_TRUE(gateway_->process().running());
  EXPECT_EQ(httpGet(admin(), "/ready").status, 503);
  EXPECT_EQ(httpGet(admin(), "/healthz").status, 200);
  EXPECT_FALSE(RawConnection(gateway_->port(), 1000).connected());
  Response again =
      httpRequest(admin(), "POST", "/drain", {{"Authorization", std::string("Bearer ") + kToken}});
  EXPECT_EQ(again.status, 200);
  EXPECT_NE(again.body.find("\"already\": true"), std::string::npos) << again.body;
  // SIGTERM then exits at once with 0: there is nothing left to drain.
  ASSERT_TRUE(gateway_->process().signal(SIGTERM));
  EXPECT_EQ(gateway_->process().waitExit(10000), 0) << gateway_->process().outputTail();
  EXPECT_TRUE(gateway_->process().waitForOutput("drained already, exiting", 0));
}

// A token file that is missing or empty is a config error naming file:line:col.
TEST(AdminTokenFile, MissingOrEmptyFileIsAConfigError) {
  std::string empty = uniqueTmpPath("empty.token");
  ASSERT_TRUE(writeFile(empty, " \n"));
  for (const std::string& file : {uniqueTmpPath("absent.token"), empty}) {
    TempConfig config("listeners: []\nadmin:\n  token_file: " + file + "\n", "token.yaml");
    Process p({runfile("core/sluice"), "--validate", "-c", config.path()});
    EXPECT_EQ(p.waitExit(20000), 1);
    std::string out = p.output();
    EXPECT_NE(out.find(config.path() + ":3:15: admin.token_file: "), std::string::npos) << out;
    EXPECT_NE(out.find(file), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace sluice::test
