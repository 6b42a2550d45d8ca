// Filter ABI 1.4 in the real host: a filter that does its header work by interned name
// (header_names_probe, built against today's SDK) after one built against the frozen ABI 1.0
// SDK (abi_1_0_filter, by-string calls only) and request_id (today's, by handle): each sees and
// changes the same header maps, and the older plugin works unchanged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: abi_1_0_filter
        path: ${OLD}
        config: { value: from-1.0 }
      - name: header_names_probe
        path: ${PROBE}
      - request_id
routes:
  - prefix: /
    cluster: echo
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

using Values = std::vector<std::string>;

TEST(HeaderNamesTest, ByHandleBesideAnAbi10Filter) {
  EchoBackend backend("echo");
  Gateway gw(kConfig, {{"OLD", runfile("test/core/plugin/abi_1_0/libabi_1_0_filter.so")},
                       {"PROBE", runfile("test/integration/plugins/libheader_names_probe.so")},
                       {"BACKEND", backend.address()}});
  ASSERT_TRUE(gw.ready());
  for (int i = 0; i < 3; ++i) {  // the same handles on every request
    Response r = httpGet(gw.port(), "/a",
                         {{"X-Multi", "one"},
                          {"x-multi", "two"},
                          {"X-Drop", "1"},
                          {"x-DROP", "2"},
                          {"Cache-Control", "no-cache"},
                          {"cache-control", "max-age=0"},
                          {"X-Request-Id", "client-id-" + std::to_string(i)}});
    ASSERT_TRUE(r.complete) << r.error;
    ASSERT_EQ(r.status, 200) << r.body;
    // The 1.0 filter's field, set by string, read by a handle of another letter case.
    EXPECT_EQ(echoHeaderValues(r.body, "X-Abi-1-0"), Values{"from-1.0"}) << r.body;
    EXPECT_EQ(echoHeaderValues(r.body, "X-Probe-Seen"), Values{"from-1.0"}) << r.body;
    EXPECT_EQ(echoHeaderValues(r.body, "X-Probe-Second"), Values{"two"});
    EXPECT_EQ(echoHeaderValues(r.body, "X-Probe-Removed"), Values{"2"});
    EXPECT_TRUE(echoHeaderValues(r.body, "X-Drop").empty()) << r.body;
    EXPECT_EQ(echoHeaderValues(r.body, "Cache-Control"), Values{"probe"}) << r.body;
    // A value with a LF is refused by handle as by name; nothing of it went upstream.
    EXPECT_EQ(echoHeaderValues(r.body, "X-Probe-Invalid"), Values{"refused"}) << r.body;
    // request_id (by handle) keeps the client's valid id and echoes it.
    EXPECT_EQ(echoHeaderValues(r.body, "X-Request-Id"), Values{"client-id-" + std::to_string(i)});
    EXPECT_EQ(r.header("X-Request-Id"), "client-id-" + std::to_string(i));
    EXPECT_EQ(r.header("X-Probe-Resp"), "yes");
    EXPECT_EQ(r.header("X-Abi-1-0-Seen"), "yes");
  }
}

}  // namespace
}  // namespace sluice::test
