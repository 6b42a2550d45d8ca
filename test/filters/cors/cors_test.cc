// cors unit tests: origin matching, preflights answered locally, actual requests' response
// headers and Vary, and configs refused at load — over the fake host.
#include "filters/cors/cors.h"

#include <gtest/gtest.h>

#include <string>

#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using testing::FakeStream;
using testing::FilterHarness;
using testing::Headers;

constexpr char kConfig[] = R"(
allow_origins: [https://app.example.com, "https://*.example.org", "localhost:3000", "null"]
allow_origin_regex: ['https://pr-[0-9]+\.preview\.example\.net']
allow_methods: [GET, POST, PUT]
allow_headers: [Content-Type, X-Api-Key]
expose_headers: [X-Request-Id, X-Total]
max_age: 600
allow_credentials: true
)";

cors::OriginMatcher matcherOf(std::initializer_list<const char*> entries) {
  cors::OriginMatcher m;
  for (const char* e : entries) {
    std::string why;
    EXPECT_TRUE(m.addEntry(e, &why)) << e << ": " << why;
  }
  return m;
}

TEST(OriginTest, ExactWildcardAndSchemelessEntries) {
  cors::OriginMatcher m =
      matcherOf({"https://app.example.com", "https://*.example.org", "localhost:3000"});
  EXPECT_TRUE(m.matchesSpecific("https://app.example.com"));
  EXPECT_TRUE(m.matchesSpecific("HTTPS://App.Example.COM"));
  EXPECT_FALSE(m.matchesSpecific("http://app.example.com"));        // scheme differs
  EXPECT_FALSE(m.matchesSpecific("https://app.example.com:8443"));  // port differs
  EXPECT_FALSE(m.matchesSpecific("https://app.example.com.evil.io"));
  EXPECT_FALSE(m.matchesSpecific("https://evilapp.example.com"));
  EXPECT_TRUE(m.matchesSpecific("https://a.example.org"));
  EXPECT_TRUE(m.matchesSpecific("https://a.b.example.org"));
  EXPECT_FALSE(m.matchesSpecific("https://example.org"));  // the apex is not a subdomain
  EXPECT_FALSE(m.matchesSpecific("https://evilexample.org"));
  EXPECT_FALSE(m.matchesSpecific("https://a.example.org.evil.io"));
  EXPECT_TRUE(m.matchesSpecific("http://localhost:3000"));
  EXPECT_TRUE(m.matchesSpecific("https://localhost:3000"));
  EXPECT_FALSE(m.matchesSpecific("ftp://localhost:3000"));
  EXPECT_FALSE(m.matchesSpecific("null"));
  EXPECT_FALSE(m.matchesSpecific("https://app.example.com/"));  // not an origin
  EXPECT_FALSE(m.matchesSpecific(""));
  EXPECT_FALSE(m.matchesSpecific("https://" + std::string(1100, 'a') + ".example.org"));
}

TEST(OriginTest, RefusesEntriesThatAreNotOrigins) {
  cors::OriginMatcher m;
  std::string why;
  EXPECT_FALSE(m.addEntry("https://app.example.com/", &why));
  EXPECT_FALSE(m.addEntry("https://app.*.example.com", &why));
  EXPECT_FALSE(m.addEntry("https://*", &why));
  EXPECT_FALSE(m.addEntry("https://a.com:99999x", &why));
  EXPECT_FALSE(m.addEntry("://a.com", &why));
  EXPECT_FALSE(m.addRegex("https://(unclosed", &why));
  EXPECT_NE(why.find("invalid regular expression"), std::string::npos) << why;
}

// Former ReDoS patterns (exponential under std::regex) load and answer adversarial origins
// correctly: RE2 matches in linear time (not asserted; the loop just repeats the attack).
TEST(OriginTest, RegexesMatchWholeOriginsInLinearTime) {
  cors::OriginMatcher m;
  std::string why;
  ASSERT_TRUE(m.addRegex("https://([a-z0-9]+)+\\.example\\.com", &why)) << why;
  ASSERT_TRUE(m.addRegex("(a|aa)*b", &why)) << why;
  EXPECT_TRUE(m.matchesSpecific("https://aaaa.example.com"));
  EXPECT_TRUE(m.matchesSpecific("aaab"));
  // Whole value: a pattern matching only part of the origin does not allow it.
  EXPECT_FALSE(m.matchesSpecific("https://aaaa.example.com.evil.io"));
  EXPECT_FALSE(m.matchesSpecific("xaaab"));
  // Case-sensitive, as the browser sent it.
  EXPECT_FALSE(m.matchesSpecific("https://AAAA.example.com"));
  const std::string letters(10000, 'a');
  for (int i = 0; i < 20; ++i) {
    // Longer than the 1024-byte cap: never matches, however the regex would answer.
    EXPECT_FALSE(m.matchesSpecific("https://" + letters + ".example.com"));
    EXPECT_FALSE(m.matchesSpecific(letters + "b"));
    // Within the cap: the regex itself runs on the adversarial value.
    EXPECT_FALSE(m.matchesSpecific("https://" + letters.substr(0, 1000) + "!"));
    EXPECT_FALSE(m.matchesSpecific(letters.substr(0, 1020) + "!"));
    EXPECT_TRUE(m.matchesSpecific(letters.substr(0, 1023) + "b"));
  }
}

TEST(CorsTest, FormerRedosOriginPatternLoadsAndAnswersAdversarialPreflights) {
  FilterHarness h(sluice_plugin_entry(),
                  "allow_origin_regex: ['https://([a-z0-9]+)+\\.example\\.com', '(a|aa)*b']\n");
  ASSERT_TRUE(h.configured()) << h.error();
  for (const std::string& origin :
       {"https://" + std::string(1000, 'a') + "!", std::string(1020, 'a') + "!"}) {
    FakeStream s("OPTIONS", "/", {{"Origin", origin}, {"Access-Control-Request-Method", "GET"}});
    EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP);
    ASSERT_TRUE(s.local_reply);
    EXPECT_EQ(s.local_reply->status, 403u);
  }
  FakeStream ok("OPTIONS", "/",
                {{"Origin", "https://pr7.example.com"}, {"Access-Control-Request-Method", "GET"}});
  EXPECT_EQ(h.requestHeaders(ok), SLUICE_FILTER_STOP);
  ASSERT_TRUE(ok.local_reply);
  EXPECT_EQ(ok.local_reply->status, 204u);
}

TEST(CorsTest, RequestsWithoutOriginPassUntouched) {
  FilterHarness h(sluice_plugin_entry(), kConfig);
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("OPTIONS", "/x", {{"Access-Control-Request-Method", "PUT"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_FALSE(s.local_reply);
  s.response_headers = {{"Content-Type", "text/plain"}};
  EXPECT_EQ(h.responseHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(s.response_headers, (Headers{{"Content-Type", "text/plain"}}));
}

TEST(CorsTest, PreflightIsAnsweredWith204AndTheHeaders) {
  FilterHarness h(sluice_plugin_entry(), kConfig);
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("OPTIONS", "/api/items",
               {{"Origin", "https://app.example.com"},
                {"Access-Control-Request-Method", "PUT"},
                {"Access-Control-Request-Headers", "content-type,X-API-KEY"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP);
  ASSERT_TRUE(s.local_reply);
  EXPECT_EQ(s.local_reply->status, 204u);
  EXPECT_EQ(s.local_reply->body, "");
  EXPECT_EQ(s.replyHeader("Access-Control-Allow-Origin"), "https://app.example.com");
  EXPECT_EQ(s.replyHeader("Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(s.replyHeader("Access-Control-Allow-Methods"), "GET, POST, PUT");
  EXPECT_EQ(s.replyHeader("Access-Control-Allow-Headers"), "content-type, x-api-key");
  EXPECT_EQ(s.replyHeader("Access-Control-Max-Age"), "600");
  EXPECT_EQ(s.replyHeader("Vary"),
            "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
  // The reply passes the response hook too (as every local reply does): nothing is added twice.
  s.response_headers = s.local_reply->headers;
  h.responseHeaders(s);
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Access-Control-Allow-Origin").size(), 1u);
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Vary").size(), 1u);
}

TEST(CorsTest, PreflightsMatchWildcardRegexAndNullOrigins) {
  FilterHarness h(sluice_plugin_entry(), kConfig);
  for (const char* origin : {"https://x.example.org", "https://pr-42.preview.example.net", "null",
                             "http://localhost:3000"}) {
    FakeStream s("OPTIONS", "/", {{"Origin", origin}, {"Access-Control-Request-Method", "GET"}});
    EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP);
    ASSERT_TRUE(s.local_reply) << origin;
    EXPECT_EQ(s.local_reply->status, 204u) << origin;
    EXPECT_EQ(s.replyHeader("Access-Control-Allow-Origin"), origin);
    EXPECT_FALSE(s.replyHeader("Access-Control-Allow-Headers")) << "none were requested";
  }
}

TEST(CorsTest, DisallowedPreflightsGet403WithoutCorsHeaders) {
  FilterHarness h(sluice_plugin_entry(), kConfig);
  struct Case {
    Headers headers;
    std::string detail;
  };
  for (const Case& c : std::vector<Case>{
           {{{"Origin", "https://evil.io"}, {"Access-Control-Request-Method", "GET"}},
            "origin not allowed"},
           {{{"Origin", "https://pr-x.preview.example.net"},
             {"Access-Control-Request-Method", "GET"}},
            "origin not allowed"},
           {{{"Origin", "https://app.example.com"}, {"Access-Control-Request-Method", "DELETE"}},
            "method not allowed"},
           {{{"Origin", "https://app.example.com"},
             {"Access-Control-Request-Method", "POST"},
             {"Access-Control-Request-Headers", "content-type, x-secret"}},
            "header x-secret not allowed"},
           {{{"Origin", "https://app.example.com"},
             {"Origin", "https://app.example.com"},
             {"Access-Control-Request-Method", "GET"}},
            "origin not allowed"},
       }) {
    FakeStream s("OPTIONS", "/", c.headers);
    EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP) << c.detail;
    ASSERT_TRUE(s.local_reply) << c.detail;
    EXPECT_EQ(s.local_reply->status, 403u);
    EXPECT_EQ(s.local_reply->content_type, "application/json");
    EXPECT_NE(s.local_reply->body.find("\"detail\":\"" + c.detail + "\""), std::string::npos)
        << s.local_reply->body;
    EXPECT_FALSE(s.replyHeader("Access-Control-Allow-Origin")) << c.detail;
  }
}

TEST(CorsTest, ActualRequestGetsAllowOriginCredentialsExposeAndVary) {
  FilterHarness h(sluice_plugin_entry(), kConfig);
  FakeStream s("POST", "/api", {{"Origin", "https://app.example.com"}});
  EXPECT_EQ(h.requestHeaders(s, false), SLUICE_FILTER_CONTINUE);
  EXPECT_FALSE(s.local_reply);
  s.response_headers = {{"Access-Control-Allow-Origin", "*"}, {"Vary", "Accept-Encoding"}};
  EXPECT_EQ(h.responseHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Access-Control-Allow-Origin"),
            std::vector<std::string>{"https://app.example.com"});
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Access-Control-Allow-Credentials"),
            std::vector<std::string>{"true"});
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Access-Control-Expose-Headers"),
            std::vector<std::string>{"X-Request-Id, X-Total"});
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Vary"),
            (std::vector<std::string>{"Accept-Encoding", "Origin"}));
}

TEST(CorsTest, DisallowedOriginGetsNoAllowOriginButVary) {
  FilterHarness h(sluice_plugin_entry(), kConfig);
  FakeStream s("GET", "/api", {{"Origin", "https://evil.io"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  s.response_headers = {{"Vary", "accept, ORIGIN"}};
  h.responseHeaders(s);
  EXPECT_TRUE(s.values(SLUICE_HEADERS_RESPONSE, "Access-Control-Allow-Origin").empty());
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Vary"),
            std::vector<std::string>{"accept, ORIGIN"});  // already names Origin
  FakeStream t("GET", "/api", {{"Origin", "https://evil.io"}});
  h.requestHeaders(t);
  h.responseHeaders(t);
  EXPECT_EQ(t.values(SLUICE_HEADERS_RESPONSE, "Vary"), std::vector<std::string>{"Origin"});
}

TEST(CorsTest, StarOriginsAnswerStarWithoutVary) {
  FilterHarness h(sluice_plugin_entry(), "allow_origins: ['*']\nallow_methods: ['*']\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream pre("OPTIONS", "/",
                 {{"Origin", "https://anyone.io"}, {"Access-Control-Request-Method", "PATCH"}});
  EXPECT_EQ(h.requestHeaders(pre), SLUICE_FILTER_STOP);
  ASSERT_TRUE(pre.local_reply);
  EXPECT_EQ(pre.local_reply->status, 204u);
  EXPECT_EQ(pre.replyHeader("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(pre.replyHeader("Access-Control-Allow-Methods"), "PATCH");
  EXPECT_FALSE(pre.replyHeader("Access-Control-Allow-Credentials"));
  EXPECT_FALSE(pre.replyHeader("Access-Control-Max-Age"));
  FakeStream s("GET", "/", {{"Origin", "https://anyone.io"}});
  h.requestHeaders(s);
  h.responseHeaders(s);
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Access-Control-Allow-Origin"),
            std::vector<std::string>{"*"});
  EXPECT_TRUE(s.values(SLUICE_HEADERS_RESPONSE, "Vary").empty());
}

TEST(CorsTest, ReflectAnyOriginWithCredentialsOnlyWhenAskedFor) {
  FilterHarness h(sluice_plugin_entry(), "reflect_any_origin: true\nallow_credentials: true\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/", {{"Origin", "https://whoever.io"}});
  h.requestHeaders(s);
  h.responseHeaders(s);
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Access-Control-Allow-Origin"),
            std::vector<std::string>{"https://whoever.io"});
  EXPECT_EQ(s.values(SLUICE_HEADERS_RESPONSE, "Vary"), std::vector<std::string>{"Origin"});
}

TEST(CorsTest, RefusesBadConfigsWithLine) {
  struct Case {
    const char* yaml;
    const char* message_start;
    uint32_t line;
  };
  for (const Case& c : {
           Case{"allow_credentials: true\nallow_origins: [https://a.io, '*']\n",
                "allow_origins '*' with allow_credentials: the Fetch standard forbids", 2},
           Case{"allow_origins: [https://a.io/path]\n", "'https://a.io/path' is not an origin", 1},
           Case{"allow_origins: [https://a.io]\nallow_origin_regex: ['(']\n",
                "invalid regular expression '(': missing ): (", 2},
           Case{"allow_origins: [https://a.io]\nallow_methods: ['GET POST']\n",
                "'GET POST' is not an HTTP method", 2},
           Case{"allow_origins: [https://a.io]\nallow_headers: ['X:Y']\n",
                "'X:Y' is not a header name", 2},
           Case{"allow_origins: [https://a.io]\nmax_age: -1\n", "expected an integer from 0", 2},
           Case{"allow_origins: [https://a.io]\nallow_credentials: true\nexpose_headers: ['*']\n",
                "expose_headers '*' with allow_credentials", 3},
           Case{"allow_origins: [https://a.io]\nreflect_any_origin: true\n",
                "reflect_any_origin allows every origin", 2},
           Case{"allow_origin_regex: ['ok', '(a)\\1']\n",
                "invalid regular expression '(a)\\1': invalid escape sequence: \\1; "
                "back-references are not supported (RE2 syntax: "
                "https://github.com/google/re2/wiki/Syntax)",
                1},
           Case{"allow_origin_regex:\n  - ok\n  - 'https://(?!evil)[a-z]+\\.a\\.io'\n",
                "invalid regular expression 'https://(?!evil)[a-z]+\\.a\\.io': invalid perl "
                "operator: (?!; lookaround is not supported",
                3},
           Case{"max_age: 5\n", "cors needs allow_origins", 0},
           Case{"allow_origin: [https://a.io]\n", "unknown key 'allow_origin'", 1},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error().rfind(c.message_start, 0), 0u) << c.yaml << " -> " << h.error();
    if (c.line != 0) {
      EXPECT_EQ(h.errorLine(), c.line) << c.yaml;
    }
  }
}

}  // namespace
}  // namespace sluice::filters
