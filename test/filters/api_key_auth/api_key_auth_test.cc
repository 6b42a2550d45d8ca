// api_key_auth unit tests: the plugin driven through its C hook table over the fake host.
#include "filters/api_key_auth/api_key_auth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test/filters/testing/filter_harness.h"
#include "test/harness/env.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using testing::FakeStream;
using testing::FilterHarness;

constexpr char kInline[] = R"(
keys:
  - {key: "key-alice", consumer: alice}
  - {key: "key-bob", consumer: bob}
)";

// A file in the test's temporary directory, removed at the end.
// A file under the test's temporary directory (Bazel removes it).
class TempFile {
 public:
  explicit TempFile(const std::string& text) : path_(test::uniqueTmpPath("keys")) {
    EXPECT_TRUE(test::writeFile(path_, text));
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> req(const FakeStream& s, const std::string& name) {
  return s.values(SLUICE_HEADERS_REQUEST, name);
}

TEST(ApiKeyAuthTest, ValidKeyNamesTheConsumer) {
  FilterHarness h(sluice_plugin_entry(), kInline);
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/x", {{"x-api-key", "key-bob"}, {"Accept", "*/*"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_FALSE(s.local_reply);
  EXPECT_EQ(s.context["consumer"], "bob");
  EXPECT_EQ(s.context["auth.method"], "api_key");
  EXPECT_EQ(req(s, "X-Consumer"), std::vector<std::string>{"bob"});
  EXPECT_TRUE(req(s, "X-Api-Key").empty()) << "the key went upstream";
  EXPECT_EQ(req(s, "Accept"), std::vector<std::string>{"*/*"});
  EXPECT_GE(s.named_header_calls, 3) << "the key read and removed, the consumer set: by handle";
}

TEST(ApiKeyAuthTest, MissingKeyIs401WithJson) {
  FilterHarness h(sluice_plugin_entry(), kInline);
  FakeStream s("GET", "/x");
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP);
  ASSERT_TRUE(s.local_reply);
  EXPECT_EQ(s.local_reply->status, 401u);
  EXPECT_EQ(s.local_reply->content_type, "application/json");
  EXPECT_EQ(s.local_reply->body, R"({"error":"unauthorized","reason":"missing api key"})");
  EXPECT_FALSE(s.replyHeader("WWW-Authenticate")) << "not configured";
  EXPECT_TRUE(s.context.empty());
}

TEST(ApiKeyAuthTest, WrongKeysAre401Invalid) {
  FilterHarness h(sluice_plugin_entry(),
                  std::string(kInline) + "www_authenticate: 'ApiKey realm=\"api\"'\n");
  ASSERT_TRUE(h.configured()) << h.error();
  for (const testing::Headers& headers : std::vector<testing::Headers>{
           {{"X-Api-Key", "key-alicf"}},
           {{"X-Api-Key", "key-alice "}},
           {{"X-Api-Key", "key-alic"}},
           {{"X-Api-Key", "KEY-ALICE"}},
           {{"X-Api-Key", ""}},
           {{"X-Api-Key", "key-alice"}, {"X-Api-Key", "key-bob"}},
       }) {
    FakeStream s("GET", "/x", headers);
    EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP) << headers[0].second;
    ASSERT_TRUE(s.local_reply);
    EXPECT_EQ(s.local_reply->status, 401u);
    EXPECT_EQ(s.local_reply->body, R"({"error":"unauthorized","reason":"invalid api key"})");
    EXPECT_EQ(s.replyHeader("WWW-Authenticate"), "ApiKey realm=\"api\"");
    EXPECT_FALSE(s.context.count("consumer"));
  }
}

TEST(ApiKeyAuthTest, ForgedConsumerHeaderIsRemovedAlways) {
  FilterHarness h(sluice_plugin_entry(), kInline);
  FakeStream ok("GET", "/", {{"X-Consumer", "admin"}, {"X-Api-Key", "key-alice"}});
  h.requestHeaders(ok);
  EXPECT_EQ(req(ok, "X-Consumer"), std::vector<std::string>{"alice"});
  FakeStream refused("GET", "/", {{"X-Consumer", "admin"}});
  h.requestHeaders(refused);
  EXPECT_TRUE(req(refused, "X-Consumer").empty());
}

TEST(ApiKeyAuthTest, EveryForgedConsumerCopyIsReplacedByTheOne) {
  FilterHarness h(sluice_plugin_entry(), kInline);
  FakeStream s("GET", "/",
               {{"X-Consumer", "admin"}, {"X-Api-Key", "key-bob"}, {"x-consumer", "root"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(req(s, "X-Consumer"), std::vector<std::string>{"bob"});
  FakeStream twice("GET", "/",
                   {{"X-Consumer", "admin"}, {"X-Api-Key", "key-bob"}, {"X-Api-Key", "key-bob"}});
  EXPECT_EQ(h.requestHeaders(twice), SLUICE_FILTER_STOP);
  EXPECT_TRUE(req(twice, "X-Consumer").empty());
}

TEST(ApiKeyAuthTest, TwoKeyFieldsAre401AlsoWithoutStrip) {
  FilterHarness h(sluice_plugin_entry(), std::string(kInline) + "strip_credential: false\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream two("GET", "/", {{"X-Api-Key", "key-alice"}, {"x-api-key", "key-alice"}});
  EXPECT_EQ(h.requestHeaders(two), SLUICE_FILTER_STOP);
  ASSERT_TRUE(two.local_reply);
  EXPECT_EQ(two.local_reply->body, R"({"error":"unauthorized","reason":"invalid api key"})");
  FakeStream one("GET", "/", {{"X-Api-Key", "key-alice"}});
  EXPECT_EQ(h.requestHeaders(one), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(req(one, "X-Api-Key"), std::vector<std::string>{"key-alice"}) << "kept (no strip)";
}

TEST(ConstantTimeEqualBytesTest, EqualOnlyWhenEveryByteIs) {
  const std::string key = "bench-key-7d1f0c2a9b8e4f56";  // 26 bytes: three words and a tail
  for (size_t len = 0; len <= key.size(); ++len) {
    std::string copy = key;
    EXPECT_TRUE(auth::constantTimeEqualBytes(key.data(), copy.data(), len)) << len;
    for (size_t at = 0; at < len; ++at) {
      std::string other = key;
      other[at] = static_cast<char>(other[at] ^ 0x01);
      EXPECT_FALSE(auth::constantTimeEqualBytes(key.data(), other.data(), len)) << len << at;
      other[at] = static_cast<char>(key[at] ^ 0x80);
      EXPECT_FALSE(auth::constantTimeEqualBytes(key.data(), other.data(), len)) << len << at;
    }
  }
}

TEST(ApiKeyAuthTest, QueryParameterIsPercentDecoded) {
  FilterHarness h(sluice_plugin_entry(), R"(
header: ""
query_param: api_key
keys: [{key: "a b+c/=&?%", consumer: carol}]
)");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/p?x=1&api_key=a+b%2Bc%2F%3D%26%3F%25&y");
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(s.context["consumer"], "carol");
  // Header reading is off: a header with the key is not looked at.
  FakeStream header_only("GET", "/p", {{"X-Api-Key", "a b+c/=&?%"}});
  EXPECT_EQ(h.requestHeaders(header_only), SLUICE_FILTER_STOP);
  EXPECT_EQ(header_only.local_reply->body,
            R"({"error":"unauthorized","reason":"missing api key"})");
  for (const char* path : {"/p?api_key=a%2", "/p?api_key=a%zz", "/p?api_key=a b%2Bc"}) {
    FakeStream bad("GET", path);
    EXPECT_EQ(h.requestHeaders(bad), SLUICE_FILTER_STOP) << path;
    EXPECT_EQ(bad.local_reply->body, R"({"error":"unauthorized","reason":"invalid api key"})")
        << path;
  }
  FakeStream other("GET", "/p?apikey=a+b%2Bc%2F%3D%26%3F%25#api_key=x");
  h.requestHeaders(other);
  EXPECT_EQ(other.local_reply->body, R"({"error":"unauthorized","reason":"missing api key"})");
}

// As the host hands a stream over after routing: the upstream path is the client's target.
std::string& routed(FakeStream& s) {
  s.attributes[SLUICE_ATTR_UPSTREAM_PATH] = s.path;
  return s.attributes[SLUICE_ATTR_UPSTREAM_PATH];
}

TEST(ApiKeyAuthTest, AKeyFromTheQueryIsRemovedFromTheForwardedTarget) {
  FilterHarness h(sluice_plugin_entry(), std::string(kInline) + "query_param: api_key\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/p?x=1&api_key=key-bob&y=%2F&z&api%5Fkey=again");
  routed(s);
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(s.context["consumer"], "bob");
  // Every copy goes (also a percent-encoded name); the rest keeps its bytes and order.
  EXPECT_EQ(s.attributes[SLUICE_ATTR_UPSTREAM_PATH], "/p?x=1&y=%2F&z");
  EXPECT_EQ(s.path, "/p?x=1&api_key=key-bob&y=%2F&z&api%5Fkey=again") << "client's target kept";
  FakeStream only("GET", "/p?api_key=key-bob");
  routed(only);
  h.requestHeaders(only);
  EXPECT_EQ(only.attributes[SLUICE_ATTR_UPSTREAM_PATH], "/p");
  // A key from the header leaves the query alone (a parameter of that name is the app's).
  FakeStream header("GET", "/p?api_key=other", {{"X-Api-Key", "key-alice"}});
  routed(header);
  h.requestHeaders(header);
  EXPECT_EQ(header.attributes[SLUICE_ATTR_UPSTREAM_PATH], "/p?api_key=other");
  // Refused requests do not go upstream: nothing to rewrite.
  FakeStream refused("GET", "/p?api_key=nope");
  routed(refused);
  EXPECT_EQ(h.requestHeaders(refused), SLUICE_FILTER_STOP);
  EXPECT_EQ(refused.attributes[SLUICE_ATTR_UPSTREAM_PATH], "/p?api_key=nope");

  FilterHarness keep(sluice_plugin_entry(),
                     std::string(kInline) + "query_param: api_key\nstrip_credential: false\n");
  FakeStream kept("GET", "/p?api_key=key-bob&x=1");
  routed(kept);
  EXPECT_EQ(keep.requestHeaders(kept), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(kept.attributes[SLUICE_ATTR_UPSTREAM_PATH], "/p?api_key=key-bob&x=1");
}

TEST(RemoveQueryParamTest, KeepsEverythingElseByteForByte) {
  using auth::removeQueryParam;
  EXPECT_EQ(removeQueryParam("/p", "k"), "/p");
  EXPECT_EQ(removeQueryParam("/p?", "k"), "/p?");
  EXPECT_EQ(removeQueryParam("/p?a=1", "k"), "/p?a=1");
  EXPECT_EQ(removeQueryParam("/p?k=1", "k"), "/p");
  EXPECT_EQ(removeQueryParam("/p?k", "k"), "/p");
  EXPECT_EQ(removeQueryParam("/p?k=1&k=2", "k"), "/p");
  EXPECT_EQ(removeQueryParam("/p?a=%2F+x&k=1&b", "k"), "/p?a=%2F+x&b");
  EXPECT_EQ(removeQueryParam("/p?b=2&a=1&k=1", "k"), "/p?b=2&a=1") << "order kept";
  EXPECT_EQ(removeQueryParam("/p?a=1&&k=1&b=2", "k"), "/p?a=1&&b=2") << "empty pairs kept";
  EXPECT_EQ(removeQueryParam("/p?%6B=1&a", "k"), "/p?a") << "encoded name";
  EXPECT_EQ(removeQueryParam("/p?kk=1&xk=2&k2=3", "k"), "/p?kk=1&xk=2&k2=3");
  EXPECT_EQ(removeQueryParam("/p?K=1", "k"), "/p?K=1") << "names are case-sensitive";
  EXPECT_EQ(removeQueryParam("/p?a=k=1&k=%zz", "k"), "/p?a=k=1") << "bad value, same name";
  EXPECT_EQ(removeQueryParam("/p?k=1#frag", "k"), "/p#frag");
  EXPECT_EQ(removeQueryParam("/a/b%20c?k=1&x", "k"), "/a/b%20c?x") << "path untouched";
}

TEST(ApiKeyAuthTest, RelativeKeysFileIsTakenFromTheConfigDirectory) {
  // The unit-test host has no config file: relative paths resolve against the current directory.
  TempFile file("dave key-dave\n");
  std::string relative =
      std::filesystem::relative(file.path(), std::filesystem::current_path()).string();
  ASSERT_NE(relative[0], '/');
  FilterHarness h(sluice_plugin_entry(), "keys_file: " + relative + "\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/", {{"X-Api-Key", "key-dave"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  // The file is declared to the host, so a reload notices when it changes.
  ASSERT_EQ(h.files().size(), 1u);
  EXPECT_EQ(h.files()[0].path, std::filesystem::path(file.path()).lexically_normal().string());
}

TEST(ApiKeyAuthTest, HeaderWinsOverQueryWhenBothConfigured) {
  FilterHarness h(sluice_plugin_entry(), std::string(kInline) + "query_param: k\n");
  FakeStream s("GET", "/?k=key-bob", {{"X-Api-Key", "key-alice"}});
  h.requestHeaders(s);
  EXPECT_EQ(s.context["consumer"], "alice");
  FakeStream q("GET", "/?k=key-bob");
  h.requestHeaders(q);
  EXPECT_EQ(q.context["consumer"], "bob");
}

TEST(ApiKeyAuthTest, CustomHeadersAndNoStrip) {
  FilterHarness h(sluice_plugin_entry(), std::string(kInline) + R"(
header: Authorization-Key
strip_credential: false
consumer_header: ""
)");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/", {{"authorization-key", "key-alice"}, {"X-Consumer", "kept"}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(req(s, "Authorization-Key"), std::vector<std::string>{"key-alice"});
  EXPECT_EQ(req(s, "X-Consumer"), std::vector<std::string>{"kept"}) << "no consumer header set";
  EXPECT_EQ(s.context["consumer"], "alice");
}

TEST(ApiKeyAuthTest, KeysFromAFileTogetherWithInlineKeys) {
  TempFile file(
      "# consumer key\n"
      "\n"
      "dave   key-dave\n"
      "  erin\tkey with inner space  \r\n"
      "frank key-frank");
  FilterHarness h(sluice_plugin_entry(), std::string(kInline) + "keys_file: " + file.path() + "\n");
  ASSERT_TRUE(h.configured()) << h.error();
  for (auto [key, consumer] :
       std::vector<std::pair<std::string, std::string>>{{"key-dave", "dave"},
                                                        {"key with inner space", "erin"},
                                                        {"key-frank", "frank"},
                                                        {"key-alice", "alice"}}) {
    FakeStream s("GET", "/", {{"X-Api-Key", key}});
    EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE) << key;
    EXPECT_EQ(s.context["consumer"], consumer);
  }
  FakeStream comment("GET", "/", {{"X-Api-Key", "key"}});
  EXPECT_EQ(h.requestHeaders(comment), SLUICE_FILTER_STOP);
}

TEST(ApiKeyAuthTest, ReloadReadsTheFileAgain) {
  TempFile file("alice old-key\n");
  std::string yaml = "keys_file: " + file.path() + "\n";
  FilterHarness before(sluice_plugin_entry(), yaml);
  ASSERT_TRUE(before.configured()) << before.error();
  ASSERT_TRUE(test::writeFile(file.path(), "alice new-key\n"));
  FilterHarness after(sluice_plugin_entry(), yaml);  // a reload builds a new config instance
  ASSERT_TRUE(after.configured()) << after.error();
  FakeStream old_key("GET", "/", {{"X-Api-Key", "old-key"}});
  EXPECT_EQ(after.requestHeaders(old_key), SLUICE_FILTER_STOP);
  FakeStream new_key("GET", "/", {{"X-Api-Key", "new-key"}});
  EXPECT_EQ(after.requestHeaders(new_key), SLUICE_FILTER_CONTINUE);
}

TEST(ApiKeyAuthTest, FindComparesDigests) {
  FilterHarness h(sluice_plugin_entry(), kInline);
  ASSERT_TRUE(h.configured()) << h.error();
  const ApiKeyAuthConfig* config =
      &static_cast<const sdk::internal::ConfigHolder<ApiKeyAuthConfig>*>(h.config())->config;
  ASSERT_NE(config->find("key-alice"), nullptr);
  EXPECT_EQ(*config->find("key-alice"), "alice");
  EXPECT_EQ(config->find(std::string_view("key-alice\0", 10)), nullptr);
  EXPECT_EQ(config->find(""), nullptr);
}

struct BadCase {
  std::string yaml;
  std::string message;
  uint32_t line;
};

TEST(ApiKeyAuthTest, RefusesBadConfigsWithLines) {
  for (const BadCase& c : std::vector<BadCase>{
           {"", "no keys: set 'keys' or 'keys_file' (with at least one key)", 0},
           {"keys: []\n", "no keys: set 'keys' or 'keys_file' (with at least one key)", 0},
           {"keys:\n  - {key: a, consumer: x}\n  - {key: a, consumer: y}\n",
            "duplicate key (first at config line 2)", 3},
           {"keys:\n  - {key: '', consumer: x}\n", "empty key", 2},
           {"keys:\n  - {key: a}\n", "missing 'consumer'", 2},
           {"keys:\n  - {key: a, consumer: 'two words'}\n",
            "consumer name with whitespace or a control character", 2},
           {"keys:\n  - {key: a, consumer: x, role: admin}\n",
            "unknown key 'role' (expected one of: key, consumer)", 2},
           {"header: 'X Key'\nkeys: [{key: a, consumer: x}]\n", "'X Key' is not a header name", 1},
           {"header: ''\nkeys: [{key: a, consumer: x}]\n",
            "no key source: set 'header' or 'query_param'", 1},
           {"keys_file: relative/keys\n",
            "cannot open '" + std::filesystem::current_path().string() +
                "/relative/keys': No such file or directory",
            1},
           {"keys_file: ''\n", "empty file path", 1},
           {"keys_file: /nonexistent/keys\n",
            "cannot open '/nonexistent/keys': No such file or directory", 1},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error(), c.message) << c.yaml;
    if (c.line != 0) {
      EXPECT_EQ(h.errorLine(), c.line) << c.yaml;
    }
  }
}

TEST(ApiKeyAuthTest, RefusesBadKeyFilesWithFileAndLine) {
  TempFile dup("alice k1\n\n# note\nbob k2\ncarol k1\n");
  TempFile no_key("alice k1\nbob\n");
  TempFile with_inline("alice key-bob\n");
  for (auto [file, message] : std::vector<std::pair<const TempFile*, std::string>>{
           {&dup, dup.path() + ":5: duplicate key (first at " + dup.path() + ":1)"},
           {&no_key, no_key.path() + ":2: expected '<consumer> <key>' (no key on this line)"},
           {&with_inline, with_inline.path() + ":1: duplicate key (first at config line 4)"},
       }) {
    std::string yaml = std::string(kInline) + "keys_file: " + file->path() + "\n";
    FilterHarness h(sluice_plugin_entry(), yaml);
    EXPECT_FALSE(h.configured());
    EXPECT_EQ(h.error(), message);
    EXPECT_EQ(h.errorLine(), 5u) << "points at keys_file";
  }
}

// The table's keyed hash is SipHash-2-4: the reference vectors (key 00..0f, message 00..n-1;
// the paper's appendix and the reference implementation's vectors.h).
TEST(ApiKeyAuthTest, SipHashMatchesTheReferenceVectors) {
  const uint64_t k0 = 0x0706050403020100ull;
  const uint64_t k1 = 0x0f0e0d0c0b0a0908ull;
  std::string message;
  for (int i = 0; i < 16; ++i) message.push_back(static_cast<char>(i));
  auto sip = [&](size_t n) {
    return auth::sipHash24(k0, k1, std::string_view(message).substr(0, n));
  };
  EXPECT_EQ(sip(0), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(sip(1), 0x74f839c593dc67fdull);
  EXPECT_EQ(sip(8), 0x93f5f5799a932462ull);
  EXPECT_EQ(sip(15), 0xa129ca6149be45e5ull);
}

}  // namespace
}  // namespace sluice::filters
