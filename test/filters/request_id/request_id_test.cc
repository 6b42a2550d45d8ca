// request_id unit tests: the plugin driven through its own C hook table (no dlopen) over a fake
// stream, plus its helpers called directly.
#include "filters/request_id/request_id.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using testing::FakeStream;
using testing::FilterHarness;

const std::regex kUuidV4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");

std::vector<std::string> requestIds(const FakeStream& s, const std::string& name = "x-request-id") {
  return s.values(SLUICE_HEADERS_REQUEST, name);
}
std::vector<std::string> responseIds(const FakeStream& s,
                                     const std::string& name = "x-request-id") {
  return s.values(SLUICE_HEADERS_RESPONSE, name);
}

TEST(RequestIdTest, GeneratesAUuidV4AndEchoesIt) {
  FilterHarness h(sluice_plugin_entry(), "");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream a, b;
  EXPECT_EQ(h.requestHeaders(a), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(h.requestHeaders(b), SLUICE_FILTER_CONTINUE);
  ASSERT_EQ(requestIds(a).size(), 1u);
  EXPECT_TRUE(std::regex_match(requestIds(a)[0], kUuidV4)) << requestIds(a)[0];
  EXPECT_NE(requestIds(a)[0], requestIds(b)[0]);
  a.response_headers = {{"X-Request-Id", "from-upstream"}};
  EXPECT_EQ(h.responseHeaders(a), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(responseIds(a), requestIds(a));
}

TEST(RequestIdTest, KeepsAValidIncomingId) {
  FilterHarness h(sluice_plugin_entry(), "");
  FakeStream s("GET", "/", {{"x-REQUEST-id", "abc-123_XYZ"}});
  h.requestHeaders(s);
  EXPECT_EQ(requestIds(s), std::vector<std::string>{"abc-123_XYZ"});
  h.responseHeaders(s);
  EXPECT_EQ(responseIds(s), std::vector<std::string>{"abc-123_XYZ"});
}

TEST(RequestIdTest, ReplacesAnInvalidIncomingId) {
  FilterHarness h(sluice_plugin_entry(), "");
  for (const testing::Headers& incoming : std::vector<testing::Headers>{
           {{"X-Request-Id", "has space"}},
           {{"X-Request-Id", std::string(201, 'a')}},
           {{"X-Request-Id", "caf\xc3\xa9"}},
           {{"X-Request-Id", ""}},
           {{"X-Request-Id", "one"}, {"X-Request-Id", "two"}},
       }) {
    FakeStream s("GET", "/", incoming);
    h.requestHeaders(s);
    ASSERT_EQ(requestIds(s).size(), 1u);
    EXPECT_TRUE(std::regex_match(requestIds(s)[0], kUuidV4)) << incoming[0].second;
  }
  FakeStream longest("GET", "/", {{"X-Request-Id", std::string(200, 'a')}});
  h.requestHeaders(longest);
  EXPECT_EQ(requestIds(longest), std::vector<std::string>{std::string(200, 'a')});
}

TEST(RequestIdTest, ConfigurableHeaderTrustAndEcho) {
  FilterHarness h(sluice_plugin_entry(),
                  "header: X-Trace\necho_in_response: false\ntrust_incoming: false\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/", {{"X-Trace", "client-chosen"}});
  h.requestHeaders(s);
  ASSERT_EQ(requestIds(s, "x-trace").size(), 1u);
  EXPECT_TRUE(std::regex_match(requestIds(s, "x-trace")[0], kUuidV4));
  EXPECT_TRUE(requestIds(s).empty());
  h.responseHeaders(s);
  EXPECT_TRUE(responseIds(s, "x-trace").empty());
}

TEST(RequestIdTest, LeavesBodyAndLogHooksNull) {
  const auto* hooks = static_cast<const sluice_filter_plugin*>(sluice_plugin_entry()->hooks);
  EXPECT_NE(hooks->on_request_headers, nullptr);
  EXPECT_NE(hooks->on_response_headers, nullptr);
  EXPECT_EQ(hooks->on_request_body, nullptr);
  EXPECT_EQ(hooks->on_response_body, nullptr);
  EXPECT_EQ(hooks->on_log, nullptr);
}

TEST(RequestIdTest, RefusesBadConfigsWithLineAndColumn) {
  struct Case {
    const char* yaml;
    const char* message;
    uint32_t line, column;
  };
  for (const Case& c : {
           Case{"header: X-Id\nechos: true\n",
                "unknown key 'echos' (expected one of: header, "
                "echo_in_response, trust_incoming)",
                2, 8},
           Case{"header: 'X Id'\n", "'X Id' is not a header name", 1, 9},
           Case{"\n  trust_incoming: maybe\n", "expected true or false", 2, 19},
           Case{"[header]\n", "expected a map", 1, 1},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error(), c.message);
    EXPECT_EQ(h.errorLine(), c.line) << c.yaml;
    EXPECT_EQ(h.errorColumn(), c.column) << c.yaml;
  }
  // The host's header_name interns 1..256 bytes: a longer name would be a handle that sets
  // nothing (no id upstream, none in the response), so it is refused at load.
  EXPECT_TRUE(FilterHarness(sluice_plugin_entry(), "header: X" + std::string(255, 'a') + "\n")
                  .configured());
  FilterHarness longer(sluice_plugin_entry(), "header: X" + std::string(256, 'a') + "\n");
  EXPECT_FALSE(longer.configured());
  EXPECT_EQ(longer.error(), "'X" + std::string(63, 'a') + "...' is longer than 256 bytes");
}

TEST(RequestIdTest, FormatsUuidV4Bits) {
  EXPECT_EQ(formatUuidV4(0, 0), "00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(formatUuidV4(~0ull, ~0ull), "ffffffff-ffff-4fff-bfff-ffffffffffff");
  EXPECT_EQ(formatUuidV4(0x0123456789abcdefull, 0xfedcba9876543210ull),
            "01234567-89ab-4def-bedc-ba9876543210");
}

// The published xoshiro256** sequence from the state {1, 2, 3, 4}.
TEST(RequestIdTest, GeneratorIsXoshiro256StarStar) {
  Xoshiro256 rng({1, 2, 3, 4});
  EXPECT_EQ(rng(), 11520u);
  EXPECT_EQ(rng(), 0u);
  EXPECT_EQ(rng(), 1509978240u);
  EXPECT_EQ(rng(), 1215971899390074240u);
}

TEST(RequestIdTest, GeneratorLeavesAnAllZeroSeed) {
  Xoshiro256 rng({0, 0, 0, 0});
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(rng());
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(RequestIdTest, IdsDoNotRepeat) {
  FilterHarness h(sluice_plugin_entry(), "");
  ASSERT_TRUE(h.configured()) << h.error();
  std::set<std::string> ids;
  for (int i = 0; i < 2000; ++i) {
    FakeStream s;
    ASSERT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
    ASSERT_EQ(requestIds(s).size(), 1u);
    ASSERT_TRUE(std::regex_match(requestIds(s)[0], kUuidV4)) << requestIds(s)[0];
    ids.insert(requestIds(s)[0]);
  }
  EXPECT_EQ(ids.size(), 2000u);
}

}  // namespace
}  // namespace sluice::filters
