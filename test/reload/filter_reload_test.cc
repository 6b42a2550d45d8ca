// Filters reload like balancers: a filter added (its header appears), its config changed (the
// value changes), removed (gone) — all seen by one keep-alive client connection that is never
// dropped, while other clients keep sending.
#include <gtest/gtest.h>

#include "test/reload/reload_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
${FILTERS}
clusters:
  - name: svc
    endpoints: [${A}]
)";

std::string headersFilter(const std::string& value) {
  return "    filters:\n"
         "      - name: headers\n"
         "        config:\n"
         "          request: { set: { X-To-Upstream: " +
         value +
         " } }\n"
         "          response: { set: { X-Greeting: " +
         value + " } }\n";
}

TEST(FilterReloadTest, AddChangeRemoveOnOneKeepAliveConnection) {
  EchoBackend a("a");
  ReloadGateway gateway(kConfig, {{"A", a.address()}, {"FILTERS", ""}});
  ASSERT_TRUE(gateway.ready());
  LoadClients load(gateway.port(), 3, "/svc/load");
  RawConnection conn(gateway.port());
  ASSERT_TRUE(conn.connected());
  int n = 0;
  auto get = [&] {
    EXPECT_TRUE(
        conn.send(buildRequest("GET", "/svc/" + std::to_string(++n), {}, "", gateway.port())));
    Response r = conn.readResponse();
    EXPECT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(r.keep_alive);
    return r;
  };
  EXPECT_EQ(get().headerCount("X-Greeting"), 0u);
  ASSERT_TRUE(load.waitResponses(50));

  struct Step {
    std::string filters;
    std::string expect;  // "" = no header
  };
  const Step steps[] = {
      {headersFilter("one"), "one"},  // added
      {headersFilter("two"), "two"},  // config changed
      {"", ""},                       // removed
      {headersFilter("three"), "three"},
      {"    filters: [ { name: headers, config: {} } ]\n", ""},  // emptied
  };
  for (const Step& step : steps) {
    SCOPED_TRACE("filters: " + step.filters);
    ASSERT_TRUE(gateway.rewrite(kConfig, {{"FILTERS", step.filters}}));
    ASSERT_NE(gateway.reload(n % 2 == 0 ? Trigger::kSighup : Trigger::kAdmin), 0u);
    for (int i = 0; i < 3; ++i) {
      Response r = get();
      EXPECT_EQ(r.header("X-Greeting"), step.expect);
      EXPECT_EQ(r.headerCount("X-Greeting"), step.expect.empty() ? 0u : 1u);
      std::vector<std::string> upstream = echoHeaderValues(r.body, "X-To-Upstream");
      EXPECT_EQ(upstream.size(), step.expect.empty() ? 0u : 1u);
      if (!upstream.empty()) {
        EXPECT_EQ(upstream[0], step.expect);
      }
    }
  }
  EXPECT_FALSE(conn.isClosed(100)) << "the keep-alive connection was dropped";
  load.stop();
  EXPECT_EQ(load.failures(), 0u) << ::testing::PrintToString(load.failureSamples());
}

}  // namespace
}  // namespace sluice::test
