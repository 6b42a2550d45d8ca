// routes[].filters through the real binary: a route that extends the listener's chain, one that
// replaces it, one that disables a listener filter, one that overrides its config (the
// `headers` filter's edits are what the echo backend receives), and a reload that changes a
// route's filters reaching a keep-alive client at its next request; route chains kept over
// many reloads, changed or not.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

// ${PER} is the per-route value of X-Which on /per.
constexpr char kConfig[] = R"(
workers: 2
admin: {address: 127.0.0.1:${ADMIN}}
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: headers
        config:
          request:
            set: {X-Listener: "on", X-Which: listener}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - name: ext
    prefix: /ext
    cluster: echo
    filters: [request_id]
  - name: repl
    prefix: /repl
    cluster: echo
    filters_mode: replace
    filters: [request_id]
  - name: off
    prefix: /off
    cluster: echo
    filters: [{name: headers, disabled: true}]
  - name: per
    prefix: /per
    cluster: echo
    filters:
      - name: headers
        config:
          request:
            set: {X-Which: ${PER}}
  - prefix: /plain
    cluster: echo
)";

std::vector<std::string> upstream(const Response& r, const char* name) {
  return echoHeaderValues(r.body, name);
}
const std::vector<std::string> kNone;
std::vector<std::string> one(const char* v) { return {v}; }

class RouteFiltersTest : public ::testing::Test {
 protected:
  void start(const std::string& per) {
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"BACKEND", backend_.address()}, {"PER", per}});
    ASSERT_TRUE(gateway_->ready());
  }
  EchoBackend backend_{"echo"};
  std::unique_ptr<Gateway> gateway_;
};

TEST_F(RouteFiltersTest, RoutesExtendReplaceDisableAndOverrideTheListenerChain) {
  start("per-route");
  const int port = gateway_->port();

  Response plain = httpGet(port, "/plain/x");
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(upstream(plain, "X-Listener"), one("on"));
  EXPECT_EQ(upstream(plain, "X-Which"), one("listener"));
  EXPECT_EQ(upstream(plain, "X-Request-Id"), kNone) << "request_id is no listener filter";

  Response ext = httpGet(port, "/ext/x");
  ASSERT_EQ(ext.status, 200) << ext.body;
  EXPECT_EQ(upstream(ext, "X-Listener"), one("on")) << "extend keeps the listener's filters";
  ASSERT_EQ(upstream(ext, "X-Request-Id").size(), 1u) << "and adds the route's";
  EXPECT_EQ(ext.header("X-Request-Id"), upstream(ext, "X-Request-Id")[0]);

  Response repl = httpGet(port, "/repl/x");
  ASSERT_EQ(repl.status, 200) << repl.body;
  EXPECT_EQ(upstream(repl, "X-Listener"), kNone) << "replace drops the listener's filters";
  EXPECT_EQ(upstream(repl, "X-Request-Id").size(), 1u);

  Response off = httpGet(port, "/off/x");
  ASSERT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(upstream(off, "X-Listener"), kNone) << "disabled removes the listener's headers";
  EXPECT_EQ(upstream(off, "X-Which"), kNone);

  Response per = httpGet(port, "/per/x");
  ASSERT_EQ(per.status, 200) << per.body;
  EXPECT_EQ(upstream(per, "X-Which"), one("per-route")) << "the route's own config instance";
  EXPECT_EQ(upstream(per, "X-Listener"), kNone) << "it replaces the listener's entry whole";

  // The listener's chain itself is untouched by the routes.
  EXPECT_EQ(upstream(httpGet(port, "/plain/y"), "X-Which"), one("listener"));
}

TEST_F(RouteFiltersTest, ReloadChangingOnlyARouteReachesKeepAliveClientsAtTheirNextRequest) {
  start("v1");
  const int port = gateway_->port();
  RawConnection conn(port);
  ASSERT_TRUE(conn.connected());
  auto next = [&](const char* path) {
    EXPECT_TRUE(conn.send(buildRequest("GET", path, {}, "", port)));
    return conn.readResponse();
  };
  Response first = next("/per/a");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(upstream(first, "X-Which"), one("v1"));

  // Background clients on fresh connections all through the reload: none may fail.
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0}, done{0};
  std::thread load([&] {
    while (!stop) {
      Response r = httpGet(port, "/per/bg");
      if (r.status != 200) ++failed;
      ++done;
    }
  });

  std::string yaml = readFile(gateway_->configPath());
  size_t at = yaml.find("X-Which: v1");
  ASSERT_NE(at, std::string::npos) << yaml;
  yaml.replace(at, 11, "X-Which: v2");
  ASSERT_TRUE(writeFile(gateway_->configPath(), yaml));
  Response reload = httpRequest(gateway_->adminPort(), "POST", "/reload");
  ASSERT_EQ(reload.status, 200) << reload.body;
  EXPECT_NE(reload.body.find("\"ok\": true"), std::string::npos) << reload.body;
  EXPECT_NE(reload.body.find("route 3 (per): filters extend [headers] (settings changed)"),
            std::string::npos)
      << reload.body;

  // The reload is acknowledged once the config is parsed and built; the workers swap right
  // after. The same connection sees the new config at a next request (poll generously).
  std::vector<std::string> which;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int requests = 0;
  do {
    Response r = next("/per/b");
    ASSERT_EQ(r.status, 200) << r.body;
    ++requests;
    which = upstream(r, "X-Which");
    if (which == one("v2")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(which, one("v2")) << "after " << requests << " requests on the same connection";
  EXPECT_FALSE(conn.isClosed(200)) << "the keep-alive connection stays open";
  // The other routes and the listener chain are as they were.
  Response plain = next("/plain/c");
  EXPECT_EQ(upstream(plain, "X-Which"), one("listener"));

  stop = true;
  load.join();
  EXPECT_EQ(failed.load(), 0) << "of " << done.load() << " requests during the reload";

  // A bad route filter entry is refused with its position; the running config keeps serving.
  size_t mode = yaml.find("    filters_mode: replace");
  ASSERT_NE(mode, std::string::npos);
  yaml.replace(mode, 25, "    filters_mode: sideways");
  ASSERT_TRUE(writeFile(gateway_->configPath(), yaml));
  Response refused = httpRequest(gateway_->adminPort(), "POST", "/reload");
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find(":24:19: routes[1].filters_mode: expected 'extend' or 'replace', "
                              "got 'sideways'"),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(upstream(next("/per/d"), "X-Which"), one("v2"));
  EXPECT_EQ(upstream(next("/repl/d"), "X-Listener"), kNone);
}

// Every reload hands the workers a new route table; each must reach the listener chains (a
// self-move of the workers' list of chains once emptied it at the second reload, so every
// route chain was dropped from then on: an auth filter on a route stopped running).
TEST_F(RouteFiltersTest, RouteChainsSurviveEveryReloadChangedOrNot) {
  start("v1");
  const int port = gateway_->port();
  auto reload = [&] {
    Response r = httpRequest(gateway_->adminPort(), "POST", "/reload");
    EXPECT_EQ(r.status, 200) << r.body;
  };
  // Until /per's X-Which is `want` (the workers swap right after the acknowledgement).
  auto perReaches = [&](const char* want) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    do {
      if (upstream(httpGet(port, "/per/x"), "X-Which") == one(want)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
  };
  std::string yaml = readFile(gateway_->configPath());
  const char* values[] = {"v1", "v2", "v3", "v4"};
  for (int i = 1; i < 4; ++i) {
    size_t at = yaml.find(std::string("X-Which: ") + values[i - 1]);
    ASSERT_NE(at, std::string::npos) << yaml;
    yaml.replace(at, 11, std::string("X-Which: ") + values[i]);
    ASSERT_TRUE(writeFile(gateway_->configPath(), yaml));
    reload();
    EXPECT_TRUE(perReaches(values[i])) << "reload " << i;
  }
  for (int i = 0; i < 3; ++i) reload();  // unchanged: every route keeps its chain
  // Give the workers time to apply the last reload (nothing visible changes).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(upstream(httpGet(port, "/per/y"), "X-Which"), one("v4"));
    Response repl = httpGet(port, "/repl/y");
    EXPECT_EQ(upstream(repl, "X-Listener"), kNone) << "replace keeps replacing";
    EXPECT_EQ(upstream(repl, "X-Request-Id").size(), 1u) << "its own chain runs";
    EXPECT_EQ(upstream(httpGet(port, "/ext/y"), "X-Request-Id").size(), 1u);
    EXPECT_EQ(upstream(httpGet(port, "/off/y"), "X-Listener"), kNone);
  }
  EXPECT_EQ(gateway_->process().output().find("is not in the route table"), std::string::npos)
      << gateway_->process().outputTail();
}

}  // namespace
}  // namespace sluice::test
