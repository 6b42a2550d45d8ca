// param_validation unit tests: the URL standard's form parsing, the rule types, the pattern
// guards, and the plugin over the fake host (400 listing every violation, 415, the buffered JSON
// body) plus configs refused at load.
#include "filters/param_validation/param_validation.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "filters/param_validation/form.h"
#include "filters/param_validation/pattern.h"
#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using testing::FakeStream;
using testing::FilterHarness;
using Json = nlohmann::json;

// The violations of a 400 reply as "in/name: reason" lines.
std::vector<std::string> violationsOf(const FakeStream& s) {
  std::vector<std::string> out;
  if (!s.local_reply) return out;
  EXPECT_EQ(s.local_reply->status, 400u);
  EXPECT_EQ(s.local_reply->content_type, "application/json");
  Json body = Json::parse(s.local_reply->body);
  EXPECT_EQ(body["status"], 400);
  EXPECT_EQ(body["error"], "invalid request");
  for (const Json& v : body["violations"]) {
    out.push_back(v["in"].get<std::string>() + "/" + v["name"].get<std::string>() + ": " +
                  v["reason"].get<std::string>());
  }
  return out;
}

TEST(FormTest, ParsesPerTheUrlStandard) {
  EXPECT_EQ(pv::queryOf("/a/b?x=1&y=2#frag"), "x=1&y=2");
  EXPECT_EQ(pv::queryOf("http://h.example/p?q=1"), "q=1");
  EXPECT_EQ(pv::queryOf("/no-query"), "");
  pv::QueryParams p = pv::parseQuery("a=1&b=x+y&&c=%41%2x%&d&e=&=v&f=a=b&%E2%82%AC=%e2%82%ac");
  pv::QueryParams want = {
      {"a", "1"}, {"b", "x y"}, {"c", "A%2x%"}, {"d", ""},
      {"e", ""},  {"", "v"},    {"f", "a=b"},   {"\xE2\x82\xAC", "\xE2\x82\xAC"}};
  EXPECT_EQ(p, want);
  EXPECT_EQ(pv::formDecode("%2B+%20"), "+  ");  // an encoded '+' stays a plus
  EXPECT_TRUE(pv::parseQuery("").empty());
  EXPECT_TRUE(pv::parseQuery("&&&").empty());
}

TEST(PatternTest, RefusesWhatRe2DoesNotAccept) {
  std::string why;
  EXPECT_FALSE(pv::Pattern::compile("[a-z", &why));
  EXPECT_EQ(why.rfind("invalid regular expression '[a-z': missing ]", 0), 0u) << why;
  EXPECT_NE(why.find("https://github.com/google/re2/wiki/Syntax"), std::string::npos) << why;
  EXPECT_FALSE(pv::Pattern::compile("(a)\\1", &why));
  EXPECT_NE(why.find("back-references are not supported"), std::string::npos) << why;
  EXPECT_FALSE(pv::Pattern::compile("^(?!admin)[a-z]+$", &why));
  EXPECT_NE(why.find("lookaround is not supported"), std::string::npos) << why;
  EXPECT_FALSE(pv::Pattern::compile(std::string(1001, 'a'), &why));
  EXPECT_EQ(why, "pattern longer than 1000 characters");
  for (const char* ok : {"^[a-z0-9-]{1,32}$", "(?:ab)?c+", "[(a+)+]*", "^(foo|bar)+$", "\\(a+\\)+",
                         "(\\d{3})-(\\d{4})", "(?i)^abc$", "^\\p{L}{1,64}$",
                         // Shapes that backtracking engines take exponential time on.
                         "(a+)+", "^(a|aa)*(b*)*$", "((ab)+)*", "(x{2,})+"}) {
    EXPECT_TRUE(pv::Pattern::compile(ok, &why)) << ok << ": " << why;
  }
  std::optional<pv::Pattern> p = pv::Pattern::compile("[0-9]{3}", &why);
  EXPECT_TRUE(p->matches("ab123"));  // searched, not anchored
  EXPECT_FALSE(p->matches("ab12"));
  std::optional<pv::Pattern> copy = p;  // copies share the compiled regex
  EXPECT_TRUE(copy->matches("999"));
}

// Former ReDoS patterns (exponential under std::regex) now load and answer adversarial values
// correctly; RE2 matches in linear time, so these loops finish quickly (not asserted).
TEST(PatternTest, OverlappingAndNestedRepetitionAnswerAdversarialValues) {
  std::string why;
  std::optional<pv::Pattern> alt = pv::Pattern::compile("^(a|aa)*b$", &why);
  ASSERT_TRUE(alt) << why;
  std::optional<pv::Pattern> nested = pv::Pattern::compile("^([a-z0-9]+)+\\.example\\.com$", &why);
  ASSERT_TRUE(nested) << why;
  const std::string as(10000, 'a');
  for (int i = 0; i < 20; ++i) {
    EXPECT_FALSE(alt->matches(as + "!"));
    EXPECT_TRUE(alt->matches(as + "b"));
    EXPECT_FALSE(nested->matches(as + "!"));
    EXPECT_TRUE(nested->matches(as + ".example.com"));
  }
  // UTF-8: "." and classes take whole characters; a byte outside valid UTF-8 matches nothing.
  std::optional<pv::Pattern> two = pv::Pattern::compile("^..$", &why);
  EXPECT_TRUE(two->matches("\xE2\x82\xAC\xE2\x82\xAC"));  // "€€"
  EXPECT_FALSE(two->matches("a\xFF"));
}

TEST(ParamValidationTest, FormerRedosPatternIsAViolationNotAStall) {
  FilterHarness h(sluice_plugin_entry(), "query:\n  code: {pattern: '^(a|aa)*$'}\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream ok("GET", "/?code=" + std::string(1024, 'a'));
  EXPECT_EQ(h.requestHeaders(ok), SLUICE_FILTER_CONTINUE);
  FakeStream bad("GET", "/?code=" + std::string(1023, 'a') + "b");
  h.requestHeaders(bad);
  EXPECT_EQ(violationsOf(bad),
            std::vector<std::string>{"query/code: must match the pattern ^(a|aa)*$"});
}

TEST(ScalarTypesTest, IntNumberBool) {
  EXPECT_EQ(pv::parseInt("-42"), -42);
  EXPECT_EQ(pv::parseInt("007"), 7);
  for (const char* bad : {"", "-", "+1", "1.0", "1e3", " 1", "0x10", "9223372036854775808"}) {
    EXPECT_FALSE(pv::parseInt(bad)) << bad;
  }
  EXPECT_EQ(pv::parseInt("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(pv::parseNumber("-1.5e2"), -150.0);
  EXPECT_EQ(pv::parseNumber("0.25"), 0.25);
  for (const char* bad : {"", ".5", "1.", "inf", "nan", "0x1p3", "1e", "+1", "1e999"}) {
    EXPECT_FALSE(pv::parseNumber(bad)) << bad;
  }
  EXPECT_EQ(pv::formatNumber(1000), "1000");
  EXPECT_EQ(pv::formatNumber(0.1), "0.1");
  EXPECT_EQ(pv::formatNumber(-2.5e-7), "-2.5e-07");
}

constexpr char kQueryConfig[] = R"(
query:
  page: {type: int, min: 1, max: 1000}
  price: {type: number, min: 0.5}
  sort: {type: enum, values: [asc, desc]}
  active: {type: bool}
  q: {required: true, min_length: 2, max_length: 10}
  code: {pattern: '^[A-Z]{3}$'}
  tag: {repeated: true, max_length: 3}
headers:
  X-Tenant: {required: true, pattern: '^[a-z0-9-]+$'}
  X-Limit: {type: int, max: 50}
)";

TEST(ParamValidationTest, ValidRequestPasses) {
  FilterHarness h(sluice_plugin_entry(), kQueryConfig);
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET",
               "/items?page=3&price=2.25&sort=asc&active=true&q=hello+w&code=ABC&tag=a&tag=bb",
               {{"x-tenant", "acme-1"}, {"X-Limit", "50"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_FALSE(s.local_reply) << s.local_reply->body;
  EXPECT_FALSE(s.buffer_request[SLUICE_BODY_REQUEST]) << "no body rules: nothing buffered";
}

TEST(ParamValidationTest, ListsEveryViolationInRuleOrder) {
  FilterHarness h(sluice_plugin_entry(), kQueryConfig);
  FakeStream s("GET", "/items?page=x&price=0.1&sort=up&active=yes&code=abc&tag=a&tag=long&other=1",
               {{"X-Limit", "51"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP);
  EXPECT_EQ(violationsOf(s), (std::vector<std::string>{
                                 "query/page: must be an integer",
                                 "query/price: must be at least 0.5",
                                 "query/sort: must be one of: asc, desc",
                                 "query/active: must be true or false",
                                 "query/q: is required",
                                 "query/code: must match the pattern ^[A-Z]{3}$",
                                 "query/tag: must be at most 3 bytes long",
                                 "header/X-Tenant: is required",
                                 "header/X-Limit: must be at most 50",
                             }));
  EXPECT_EQ(s.local_reply->body.rfind(
                "{\"status\":400,\"error\":\"invalid request\",\"violations\":[{\"in\":\"query\","
                "\"name\":\"page\",\"reason\":\"must be an integer\"}",
                0),
            0u)
      << s.local_reply->body;
}

TEST(ParamValidationTest, RepeatedParametersAndHeadersAreRefusedUnlessAllowed) {
  FilterHarness h(sluice_plugin_entry(), kQueryConfig);
  FakeStream s("GET", "/?q=ok&page=1&page=2000&q=ok", {{"X-Tenant", "a"}, {"X-Tenant", "b"}});
  h.requestHeaders(s);
  EXPECT_EQ(violationsOf(s), (std::vector<std::string>{"query/page: must not be repeated",
                                                       "query/q: must not be repeated",
                                                       "header/X-Tenant: must not be repeated"}));
}

TEST(ParamValidationTest, DecodesBeforeChecking) {
  FilterHarness h(sluice_plugin_entry(), kQueryConfig);
  FakeStream ok("GET", "/?q=%68i&page=%31%30", {{"X-Tenant", "t"}});
  EXPECT_EQ(h.requestHeaders(ok), SLUICE_FILTER_CONTINUE);
  FakeStream bad("GET", "/?q=hi&page=1%2B1", {{"X-Tenant", "t"}});  // "1+1"
  h.requestHeaders(bad);
  EXPECT_EQ(violationsOf(bad), std::vector<std::string>{"query/page: must be an integer"});
}

TEST(ParamValidationTest, PatternInputIsCapped) {
  FilterHarness h(sluice_plugin_entry(), "query:\n  s: {pattern: '^a*$'}\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream ok("GET", "/?s=" + std::string(1024, 'a'));
  EXPECT_EQ(h.requestHeaders(ok), SLUICE_FILTER_CONTINUE);
  FakeStream big("GET", "/?s=" + std::string(1025, 'a'));
  h.requestHeaders(big);
  EXPECT_EQ(violationsOf(big),
            std::vector<std::string>{"query/s: must be at most 1024 bytes long"});
}

TEST(ParamValidationTest, IntBoundsAreExactBeyondDoublePrecision) {
  FilterHarness h(sluice_plugin_entry(), "query:\n  id: {type: int, max: 9007199254740993}\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream ok("GET", "/?id=9007199254740993");
  EXPECT_EQ(h.requestHeaders(ok), SLUICE_FILTER_CONTINUE);
  FakeStream over("GET", "/?id=9007199254740994");  // the same double as the max
  h.requestHeaders(over);
  EXPECT_EQ(violationsOf(over),
            std::vector<std::string>{"query/id: must be at most 9007199254740993"});
}

TEST(ParamValidationTest, UnknownQueryReject) {
  FilterHarness h(sluice_plugin_entry(), "unknown_query: reject\nquery:\n  a: {}\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/?a=1&b=2&c&b=3");
  h.requestHeaders(s);
  EXPECT_EQ(violationsOf(s),
            (std::vector<std::string>{"query/b: is not allowed", "query/c: is not allowed"}));
}

TEST(ParamValidationTest, ViolationsBodyIsValidJsonForAnyBytes) {
  std::string body = violationsBody({{"query", "bad\xff\"name", "is not allowed"}});
  Json j = Json::parse(body);
  EXPECT_EQ(j["violations"][0]["name"], "bad\xEF\xBF\xBD\"name");
}

constexpr char kBodyConfig[] = R"(
query:
  dry_run: {type: bool}
body:
  max_bytes: 4096
  max_depth: 4
  required: [name, address.city]
  fields:
    name: {type: string, min_length: 1, max_length: 5}
    age: {type: integer, min: 0, max: 150}
    score: {type: number, max: 1}
    role: {type: string, enum: [admin, user]}
    level: {type: integer, enum: [1, 2, 3]}
    active: {type: boolean}
    tags: {type: array, max_length: 2}
    meta: {type: object}
    gone: {type: "null"}
    address.zip: {type: string, pattern: '^[0-9]{5}$'}
)";

TEST(ParamValidationBodyTest, BuffersAJsonBodyAndPassesItUnchanged) {
  FilterHarness h(sluice_plugin_entry(), kBodyConfig);
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("POST", "/users", {{"Content-Type", "application/json; charset=utf-8"}});
  EXPECT_EQ(h.requestHeaders(s, false), SLUICE_FILTER_CONTINUE);
  ASSERT_TRUE(s.buffer_request[SLUICE_BODY_REQUEST]);
  EXPECT_EQ(s.buffer_request[SLUICE_BODY_REQUEST]->max_bytes, 4096u);
  EXPECT_EQ(s.buffer_request[SLUICE_BODY_REQUEST]->over_limit_status, 0u);  // host's 413
  std::string body =
      R"({"name":"Ann","age":30.0,"score":0.5,"role":"user","level":2,"active":false,)"
      R"("tags":["a"],"meta":{"k":[1,{"x":2}]},"gone":null,"address":{"city":"Paris","zip":"75001"},)"
      R"("extra":"ignored"})";
  EXPECT_EQ(h.requestBody(s, body, true), SLUICE_FILTER_CONTINUE);
  EXPECT_FALSE(s.local_reply) << s.local_reply->body;
  EXPECT_FALSE(s.replaced_body[SLUICE_BODY_REQUEST]) << "the body goes upstream as it came";
}

TEST(ParamValidationBodyTest, ListsQueryAndBodyViolationsTogether) {
  FilterHarness h(sluice_plugin_entry(), kBodyConfig);
  FakeStream s("PUT", "/users?dry_run=maybe", {{"Content-Type", "application/merge-patch+json"}});
  EXPECT_EQ(h.requestHeaders(s, false), SLUICE_FILTER_CONTINUE);  // waits for the body
  EXPECT_FALSE(s.local_reply);
  std::string body =
      R"({"name":"Annabel","age":-1,"score":2,"role":"root","level":2.5,"active":"yes",)"
      R"("tags":[1,2,3],"meta":[],"gone":0,"address":{"zip":"7500"}})";
  EXPECT_EQ(h.requestBody(s, body, true), SLUICE_FILTER_STOP);
  EXPECT_EQ(violationsOf(s), (std::vector<std::string>{
                                 "query/dry_run: must be true or false",
                                 "body/name: must be at most 5 characters long",
                                 "body/age: must be at least 0",
                                 "body/score: must be at most 1",
                                 "body/role: must be one of: admin, user",
                                 "body/level: must be an integer",
                                 "body/active: must be a boolean",
                                 "body/tags: must be at most 2 items long",
                                 "body/meta: must be an object",
                                 "body/gone: must be null",
                                 "body/address.zip: must match the pattern ^[0-9]{5}$",
                                 "body/address.city: is required",
                             }));
}

TEST(ParamValidationBodyTest, MalformedBodies) {
  FilterHarness h(sluice_plugin_entry(), kBodyConfig);
  struct Case {
    std::string body;
    std::string violation;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"name":"a",)", "body/: not valid JSON (at byte 13)"},
           {"", "body/: not valid JSON (at byte 1)"},
           {R"({"name":"a","name":"b","address":{"city":"x"}})", "body/: duplicate key 'name'"},
           {R"({"name":"a","address":{"city":"x"},"meta":{"a":{"b":{"c":[1]}}}})",
            "body/: nested deeper than 4 levels"},
           {R"(["name"])", "body/: must be a JSON object"},
           {"{\"name\":\"\xff\"}", "body/: not valid JSON (at byte 10)"},
           {R"({"name":"é"} trailing)", "body/: not valid JSON (at byte 17)"},
       }) {
    FakeStream s("POST", "/", {{"Content-Type", "application/json"}});
    h.requestHeaders(s, false);
    EXPECT_EQ(h.requestBody(s, c.body, true), SLUICE_FILTER_STOP) << c.body;
    EXPECT_EQ(violationsOf(s), std::vector<std::string>{c.violation}) << c.body;
  }
  // Very deep nesting stops at the limit (no recursion on the way there).
  FakeStream deep("POST", "/", {{"Content-Type", "application/json"}});
  h.requestHeaders(deep, false);
  EXPECT_EQ(h.requestBody(deep, std::string(100000, '['), true), SLUICE_FILTER_STOP);
  EXPECT_EQ(violationsOf(deep), std::vector<std::string>{"body/: nested deeper than 4 levels"});
  // Depth exactly at the limit is fine.
  FakeStream s("POST", "/", {{"Content-Type", "application/json"}});
  h.requestHeaders(s, false);
  EXPECT_EQ(h.requestBody(s, R"({"name":"a","address":{"city":"x"},"meta":{"a":{"b":[1]}}})", true),
            SLUICE_FILTER_CONTINUE);
}

TEST(ParamValidationBodyTest, NonJsonContentTypeIs415) {
  FilterHarness h(sluice_plugin_entry(), kBodyConfig);
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded", "application/jsonx",
                           "application/+json", "json", ""}) {
    FakeStream s("POST", "/", {{"Content-Type", type}});
    EXPECT_EQ(h.requestHeaders(s, false), SLUICE_FILTER_STOP) << type;
    ASSERT_TRUE(s.local_reply) << type;
    EXPECT_EQ(s.local_reply->status, 415u);
    EXPECT_EQ(s.local_reply->content_type, "application/json");
    EXPECT_FALSE(s.buffer_request[SLUICE_BODY_REQUEST]);
  }
  FakeStream none("POST", "/");
  EXPECT_EQ(h.requestHeaders(none, false), SLUICE_FILTER_STOP);
  EXPECT_EQ(none.local_reply->status, 415u);
}

TEST(ParamValidationBodyTest, MissingBodyAndOtherMethods) {
  FilterHarness h(sluice_plugin_entry(), kBodyConfig);
  FakeStream post("POST", "/");
  EXPECT_EQ(h.requestHeaders(post, true), SLUICE_FILTER_STOP);
  EXPECT_EQ(violationsOf(post), std::vector<std::string>{"body/: a JSON body is required"});
  // GET is not in body.methods: its body is not looked at, whatever its type.
  FakeStream get("GET", "/", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(h.requestHeaders(get, false), SLUICE_FILTER_CONTINUE);
  EXPECT_FALSE(get.buffer_request[SLUICE_BODY_REQUEST]);
  EXPECT_EQ(h.requestBody(get, "not json", true), SLUICE_FILTER_CONTINUE);
  // Without required fields, a bodiless POST passes.
  FilterHarness optional(sluice_plugin_entry(), "body:\n  fields:\n    a: {type: string}\n");
  ASSERT_TRUE(optional.configured()) << optional.error();
  FakeStream empty("POST", "/");
  EXPECT_EQ(optional.requestHeaders(empty, true), SLUICE_FILTER_CONTINUE);
}

TEST(ParamValidationTest, RefusesBadRulesWithLine) {
  struct Case {
    const char* yaml;
    const char* message_start;
    uint32_t line;
  };
  for (const Case& c : {
           Case{"query:\n  a: {type: int}\n  b: {type: integer32}\n", "unknown type 'integer32'",
                3},
           Case{"query:\n  a:\n    type: int\n    min: 10\n    max: 5\n",
                "max 5 is less than min 10", 5},
           Case{"query:\n  a: {type: int, min: 1.5}\n", "min must be an integer", 2},
           Case{"query:\n  a: {min: 1}\n", "min applies to types int and number", 2},
           Case{"query:\n  a: {type: enum}\n", "type enum needs a non-empty values list", 2},
           Case{"query:\n  a: {values: [x]}\n", "values applies to type enum only", 2},
           Case{"query:\n  a:\n    pattern: '(a)\\1$'\n",
                "invalid regular expression '(a)\\1$': invalid escape sequence: \\1; "
                "back-references are not supported",
                3},
           Case{"query:\n  a:\n    pattern: '[z-a]'\n", "invalid regular expression '[z-a]'", 3},
           Case{"query:\n  a: {min_length: 5, max_length: 2}\n",
                "max_length 2 is less than min_length 5", 2},
           Case{"query:\n  a: {requird: true}\n", "unknown key 'requird'", 2},
           Case{"headers:\n  'X Bad': {}\n", "'X Bad' is not a header name", 2},
           Case{"headers:\n  X-A: {}\n  x-a: {}\n", "'x-a' has two rules", 3},
           Case{"unknown_query: maybe\n", "expected allow or reject", 1},
           Case{"body:\n  fields:\n    a: {type: float}\n", "unknown type 'float'", 3},
           Case{"body:\n  fields:\n    a: {type: string, min: 1}\n",
                "min applies to types integer and number", 3},
           Case{"body:\n  fields:\n    a: {type: integer, enum: [1, 2.5]}\n",
                "'2.5' is not an integer", 3},
           Case{"body:\n  fields:\n    a: {type: number, pattern: x}\n",
                "pattern applies to type string", 3},
           Case{"body:\n  required: [a, 'b..c']\n", "field 'b..c': empty name between dots", 2},
           Case{"body:\n  max_depth: 0\n", "expected an integer from 1 to 1000", 2},
           Case{"body:\n  max_bytes: 0\n", "expected an integer from 1 to", 2},
           Case{"body: [a]\n", "expected a map", 1},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error().rfind(c.message_start, 0), 0u) << c.yaml << " -> " << h.error();
    EXPECT_EQ(h.errorLine(), c.line) << c.yaml << " -> " << h.error();
  }
}

}  // namespace
}  // namespace sluice::filters
