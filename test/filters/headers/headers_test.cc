// headers unit tests: the plugin driven through its own C hook table (no dlopen) over a fake
// stream.
#include "filters/headers/headers.h"

#include <gtest/gtest.h>

#include <string>

#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using testing::FakeStream;
using testing::FilterHarness;
using testing::Headers;

constexpr char kBothWays[] = R"(
request:
  remove: [X-Debug, x-drop]
  set: {X-Gateway: sluice, x-debug: "1"}
  add: {Via: [1.1 sluice, 1.1 edge], X-Gateway: second}
response:
  remove: Server
  set: {Cache-Control: no-store}
  add: {X-Served-By: sluice}
)";

TEST(HeadersTest, AppliesRemoveThenSetThenAddToRequests) {
  FilterHarness h(sluice_plugin_entry(), kBothWays);
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/",
               {{"Host", "a"},
                {"X-Debug", "secret"},
                {"X-Gateway", "spoofed"},
                {"X-Drop", "1"},
                {"x-gateway", "again"},
                {"Accept", "*/*"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  // remove happened before set (x-debug set back to "1", once), set replaced both X-Gateway
  // fields by one in place, and add appended after set.
  EXPECT_EQ(s.request_headers, (Headers{{"Host", "a"},
                                        {"X-Gateway", "sluice"},
                                        {"Accept", "*/*"},
                                        {"x-debug", "1"},
                                        {"Via", "1.1 sluice"},
                                        {"Via", "1.1 edge"},
                                        {"X-Gateway", "second"}}));
  EXPECT_TRUE(s.response_headers.empty());
}

TEST(HeadersTest, AppliesRemoveThenSetThenAddToResponses) {
  FilterHarness h(sluice_plugin_entry(), kBothWays);
  FakeStream s;
  h.requestHeaders(s);
  s.response_status = 200;
  s.response_headers = {
      {"server", "nginx"}, {"Cache-Control", "max-age=60"}, {"X-Served-By", "b1"}};
  EXPECT_EQ(h.responseHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(
      s.response_headers,
      (Headers{{"Cache-Control", "no-store"}, {"X-Served-By", "b1"}, {"X-Served-By", "sluice"}}));
}

TEST(HeadersTest, EmptyConfigChangesNothing) {
  FilterHarness h(sluice_plugin_entry(), "");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/", {{"A", "1"}});
  h.requestHeaders(s);
  EXPECT_EQ(s.request_headers, (Headers{{"A", "1"}}));
}

TEST(HeadersTest, RefusesBadConfigsWithLineAndColumn) {
  struct Case {
    const char* yaml;
    const char* message;
    uint32_t line, column;
  };
  for (const Case& c : {
           Case{"request:\n  sett: {A: b}\n",
                "unknown key 'sett' (expected one of: remove, "
                "set, add)",
                2, 9},
           Case{"requests: {}\n", "unknown key 'requests' (expected one of: request, response)", 1,
                11},
           Case{"request:\n  set: {\"Bad Name\": v}\n", "'Bad Name' is not a header name", 2, 21},
           Case{"response:\n  add:\n    X-A: \"a\\r\\nInjected: 1\"\n",
                "header value contains CR, LF or NUL", 3, 10},
           Case{"response:\n  set: {X-A: \"a\\0b\"}\n", "header value contains CR, LF or NUL", 2,
                14},
           Case{"request:\n  remove: [ok, \"no:colon\"]\n", "'no:colon' is not a header name", 2,
                16},
           Case{"request:\n  set: {Content-Length: 5}\n",
                "Content-Length cannot be changed: the proxy owns message framing", 2, 25},
           Case{"request:\n  add: [a, b]\n", "expected a map of header names to values", 2, 8},
           Case{"request:\n  set: {X-A: {b: c}}\n", "expected a string", 2, 14},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error(), c.message) << c.yaml;
    EXPECT_EQ(h.errorLine(), c.line) << c.yaml;
    EXPECT_EQ(h.errorColumn(), c.column) << c.yaml;
  }
}

}  // namespace
}  // namespace sluice::filters
