// set_upstream_path (ABI 1.2) in the real host, through the upstream_path_probe test plugin in
// front of the echo backend: the upstream's request line carries the new target, the
// SLUICE_ATTR_UPSTREAM_PATH attribute reads it, invalid targets and calls after the request
// headers left the chain are refused, a paused request can still change it, and the access log
// keeps the client's target.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "test/integration/access_log_util.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

class UpstreamPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = uniqueTmpPath("access.log");
    gw_ = std::make_unique<Gateway>(
        R"(workers: 1
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    access_log: {path: '${LOG}', format: '%{path}'}
    filters: [{name: upstream_path_probe, path: '${PROBE}'}]
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)",
        std::map<std::string, std::string>{{"BACKEND", backend_.address()},
                                           {"LOG", log_},
                                           {"PROBE", runfile("test/integration/plugins/"
                                                             "libupstream_path_probe.so")}});
    ASSERT_TRUE(gw_->ready());
  }
  Response get(const std::string& target, Headers headers) {
    return httpGet(gw_->port(), target, headers);
  }
  EchoBackend backend_{"echo"};
  std::string log_;
  std::unique_ptr<Gateway> gw_;
};

TEST_F(UpstreamPathTest, TheUpstreamGetsTheNewTargetTheLogTheClients) {
  Response r = get("/gateway/echo/a?key=secret&x=1", {{"X-Set-Path", "/echo/b?x=1&y=%2F"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(echoString(r.body, "path"), "/echo/b?x=1&y=%2F") << r.body;
  EXPECT_EQ(echoHeaderValues(r.body, "X-Set-Result"), std::vector<std::string>{"ok"});
  EXPECT_EQ(echoHeaderValues(r.body, "X-Seen-Upstream-Path"),
            std::vector<std::string>{"/echo/b?x=1&y=%2F"});
  EXPECT_EQ(r.header("X-Late-Result"), "refused") << "set from the response headers";
  std::vector<std::string> lines = waitForLines(log_, 1, "/gateway/echo/a");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "/gateway/echo/a?key=secret&x=1");
}

TEST_F(UpstreamPathTest, InvalidTargetsAreRefusedAndTheRoutedOneIsKept) {
  for (const char* bad : {"echo/no-slash", "/a b", "/a#frag", "/a%2", "/a%zz", "/\"q\"", "/a\\b"}) {
    Response r = get("/gateway/echo/keep?x=1", {{"X-Set-Path", bad}});
    ASSERT_EQ(r.status, 200) << bad << ": " << r.body;
    EXPECT_EQ(echoHeaderValues(r.body, "X-Set-Result"), std::vector<std::string>{"refused"}) << bad;
    EXPECT_EQ(echoString(r.body, "path"), "/echo/keep?x=1") << bad;
  }
  std::string long_path = "/" + std::string(8192, 'a');
  Response r = get("/gateway/echo/keep", {{"X-Set-Path", long_path}});
  EXPECT_EQ(echoHeaderValues(r.body, "X-Set-Result"), std::vector<std::string>{"refused"});
}

TEST_F(UpstreamPathTest, WhilePausedInTheRequestHeaders) {
  Response r = get("/gateway/echo/a", {{"X-Set-Path", "/echo/later"}, {"X-Pause", "1"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(echoHeaderValues(r.body, "X-Set-Result"), std::vector<std::string>{"ok"});
  EXPECT_EQ(echoString(r.body, "path"), "/echo/later");
}

}  // namespace
}  // namespace sluice::test
