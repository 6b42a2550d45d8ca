// basic_auth unit tests: hashes made here with libcrypt (crypt_gensalt_rn + crypt_rn), the plugin
// driven through its C hook table over the fake host.
#include "filters/basic_auth/basic_auth.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "filters/auth_common/auth_common.h"
#include "test/filters/testing/filter_harness.h"
#include "test/harness/env.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using testing::FakeStream;
using testing::FilterHarness;

// crypt(3) hash of `password` with a fresh salt of method `prefix` ("$2b$", "$6$", ...) at
// `cost` (0 = the method's default; bcrypt 4 keeps the test fast).
std::string makeHash(const std::string& prefix, const std::string& password,
                     unsigned long cost = 0) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn(prefix.c_str(), cost, nullptr, 0, setting, sizeof(setting)), nullptr);
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const char* out = crypt_rn(password.c_str(), setting, &data, sizeof(data));
  EXPECT_NE(out, nullptr);
  return out != nullptr ? out : "";
}

// A file under the test's temporary directory (Bazel removes it).
class TempFile {
 public:
  explicit TempFile(const std::string& text) : path_(test::uniqueTmpPath("htpasswd")) {
    EXPECT_TRUE(test::writeFile(path_, text));
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string basic(const std::string& user_colon_password) {
  // Standard base64 with padding, from the url-safe encoder.
  std::string b = auth::base64UrlEncode(user_colon_password);
  for (char& c : b) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (b.size() % 4 != 0) b.push_back('=');
  return "Basic " + b;
}

BasicAuthWorker& workerOf(FilterHarness& h) {
  using Plugin = sdk::internal::FilterPlugin<BasicAuthConfig, BasicAuthWorker, BasicAuthFilter>;
  return static_cast<Plugin::Worker*>(h.worker())->worker;
}

class BasicAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    file_ = new TempFile(
        "# users\n"
        "\n"
        "alice:" +
        makeHash("$2b$", "wonderland", 4) + "\n" + "bob:" + makeHash("$6$", "builder") + "\r\n" +
        "carol:" + makeHash("$5$", "c4r0l") + "\n" + "dave:" + makeHash("$y$", "pässwörd") + "\n" +
        "erin:" + makeHash("$2y$", "colon:in:password", 4) + "\n");
  }
  static void TearDownTestSuite() { delete file_; }
  // Verification on the worker thread (verify_threads: 0) unless `extra` says otherwise: the
  // hook then answers at once. The pool's own tests are below.
  std::string yaml(const std::string& extra = "") const {
    std::string threads =
        extra.find("verify_threads") == std::string::npos ? "verify_threads: 0\n" : "";
    return "htpasswd_file: " + file_->path() + "\n" + threads + extra;
  }
  // Runs the request headers hook and, when it paused, the posts that come back from the
  // verification threads (polling, generous deadline: the machine may be loaded).
  static sluice_filter_status drive(FilterHarness& h, FakeStream& s) {
    sluice_filter_status st = h.requestHeaders(s);
    if (st != SLUICE_FILTER_PAUSE) return st;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (FilterHarness::runPosts() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return st;
  }
  static inline TempFile* file_ = nullptr;
};

TEST_F(BasicAuthTest, EveryHashMethodVerifies) {
  FilterHarness h(sluice_plugin_entry(), yaml());
  ASSERT_TRUE(h.configured()) << h.error();
  for (auto [user, password] :
       std::vector<std::pair<std::string, std::string>>{{"alice", "wonderland"},
                                                        {"bob", "builder"},
                                                        {"carol", "c4r0l"},
                                                        {"dave", "pässwörd"},
                                                        {"erin", "colon:in:password"}}) {
    FakeStream s("GET", "/", {{"authorization", basic(user + ":" + password)}});
    EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE) << user;
    EXPECT_FALSE(s.local_reply) << user;
    EXPECT_EQ(s.context["consumer"], user);
    EXPECT_EQ(s.context["auth.method"], "basic");
    EXPECT_EQ(s.values(SLUICE_HEADERS_REQUEST, "X-Consumer"), std::vector<std::string>{user});
    EXPECT_TRUE(s.values(SLUICE_HEADERS_REQUEST, "Authorization").empty()) << "not stripped";
  }
}

TEST_F(BasicAuthTest, FailuresAre401WithTheChallenge) {
  FilterHarness h(sluice_plugin_entry(), yaml("realm: 'My \"API\"'\n"));
  ASSERT_TRUE(h.configured()) << h.error();
  struct Case {
    testing::Headers headers;
    std::string reason;
  };
  for (const Case& c : std::vector<Case>{
           {{}, "missing credentials"},
           {{{"Authorization", "Bearer abc.def.ghi"}}, "missing credentials"},
           {{{"Authorization", "Basic"}}, "malformed credentials"},
           {{{"Authorization", "Basic !!!!"}}, "malformed credentials"},
           {{{"Authorization", "Basic YWxpY2U"}}, "malformed credentials"},  // no padding
           {{{"Authorization", basic("alice")}}, "malformed credentials"},   // no colon
           {{{"Authorization", basic("alice:wonderland")},
             {"Authorization", basic("alice:wonderland")}},
            "malformed credentials"},
           {{{"Authorization", "Basic " + std::string(9000, 'A')}}, "malformed credentials"},
           {{{"Authorization", basic("alice:Wonderland")}}, "invalid credentials"},
           {{{"Authorization", basic("alice:")}}, "invalid credentials"},
           {{{"Authorization", basic("mallory:wonderland")}}, "invalid credentials"},
           {{{"Authorization", basic("Alice:wonderland")}}, "invalid credentials"},
           {{{"Authorization", basic(std::string("alice:wonderland\0x", 18))}},
            "invalid credentials"},
       }) {
    FakeStream s("GET", "/", c.headers);
    s.request_headers.emplace_back("X-Consumer", "forged");
    EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_STOP) << c.reason;
    ASSERT_TRUE(s.local_reply);
    EXPECT_EQ(s.local_reply->status, 401u);
    EXPECT_EQ(s.local_reply->content_type, "application/json");
    EXPECT_EQ(s.local_reply->body, "{\"error\":\"unauthorized\",\"reason\":\"" + c.reason + "\"}");
    EXPECT_EQ(s.replyHeader("WWW-Authenticate"),
              "Basic realm=\"My \\\"API\\\"\", charset=\"UTF-8\"");
    EXPECT_TRUE(s.values(SLUICE_HEADERS_REQUEST, "X-Consumer").empty());
    EXPECT_TRUE(s.context.empty());
  }
}

TEST_F(BasicAuthTest, SchemeIsCaseInsensitive) {
  FilterHarness h(sluice_plugin_entry(), yaml());
  std::string value = basic("bob:builder");
  FakeStream s("GET", "/", {{"Authorization", "bASIC   " + value.substr(6)}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
}

TEST_F(BasicAuthTest, CacheSkipsCryptForARepeatedPasswordUntilTtl) {
  FilterHarness h(sluice_plugin_entry(), yaml("cache_ttl_s: 10\n"));
  BasicAuthWorker& w = workerOf(h);
  auto run = [&](const std::string& creds, uint64_t at_us) {
    FakeStream s("GET", "/", {{"Authorization", basic(creds)}});
    s.start_time_us = at_us;
    return h.requestHeaders(s);
  };
  EXPECT_EQ(run("alice:wonderland", 1'000'000), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(w.cryptCalls(), 1u);
  EXPECT_EQ(run("alice:wonderland", 5'000'000), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(w.cryptCalls(), 1u) << "second verify came from the cache";
  // A wrong password is never answered from the cache.
  EXPECT_EQ(run("alice:wonderlanD", 5'000'000), SLUICE_FILTER_STOP);
  EXPECT_EQ(w.cryptCalls(), 2u);
  EXPECT_EQ(run("alice:wonderland", 11'000'001), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(w.cryptCalls(), 3u) << "expired entry verified again";
  // Failures are not cached: the same wrong password costs a crypt each time.
  EXPECT_EQ(run("bob:nope", 12'000'000), SLUICE_FILTER_STOP);
  EXPECT_EQ(run("bob:nope", 12'000'000), SLUICE_FILTER_STOP);
  EXPECT_EQ(w.cryptCalls(), 5u);
  // Unknown users cost a crypt too (timing does not reveal valid names).
  EXPECT_EQ(run("nobody:x", 12'000'000), SLUICE_FILTER_STOP);
  EXPECT_EQ(w.cryptCalls(), 6u);
}

TEST_F(BasicAuthTest, CacheIsBoundedAndCanBeOff) {
  FilterHarness bounded(sluice_plugin_entry(), yaml("cache_max_entries: 2\n"));
  for (const char* creds : {"bob:builder", "carol:c4r0l", "dave:pässwörd", "bob:builder"}) {
    FakeStream s("GET", "/", {{"Authorization", basic(creds)}});
    EXPECT_EQ(bounded.requestHeaders(s), SLUICE_FILTER_CONTINUE) << creds;
    EXPECT_LE(workerOf(bounded).cacheSize(), 2u);
  }
  FilterHarness off(sluice_plugin_entry(), yaml("cache_ttl_s: 0\n"));
  for (int i = 0; i < 2; ++i) {
    FakeStream s("GET", "/", {{"Authorization", basic("carol:c4r0l")}});
    EXPECT_EQ(off.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  }
  EXPECT_EQ(workerOf(off).cryptCalls(), 2u);
  EXPECT_EQ(workerOf(off).cacheSize(), 0u);
}

TEST_F(BasicAuthTest, KeepsAuthorizationAndNoConsumerHeaderWhenAsked) {
  FilterHarness h(sluice_plugin_entry(), yaml("strip_credential: false\nconsumer_header: ''\n"));
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/", {{"Authorization", basic("bob:builder")}});
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(s.values(SLUICE_HEADERS_REQUEST, "Authorization").size(), 1u);
  EXPECT_TRUE(s.values(SLUICE_HEADERS_REQUEST, "X-Consumer").empty());
  EXPECT_EQ(s.context["consumer"], "bob");
}

TEST_F(BasicAuthTest, VerifiesOffTheWorkerThreadAndResumes) {
  FilterHarness h(sluice_plugin_entry(), yaml("verify_threads: 2\n"));
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream ok("GET", "/", {{"Authorization", basic("alice:wonderland")}});
  EXPECT_EQ(drive(h, ok), SLUICE_FILTER_PAUSE) << "bcrypt must not run in the hook";
  EXPECT_EQ(ok.resumed, 1);
  EXPECT_FALSE(ok.local_reply);
  EXPECT_EQ(ok.context["consumer"], "alice");
  EXPECT_EQ(ok.values(SLUICE_HEADERS_REQUEST, "X-Consumer"), std::vector<std::string>{"alice"});
  EXPECT_TRUE(ok.values(SLUICE_HEADERS_REQUEST, "Authorization").empty());

  // Now cached on this worker: answered in the hook.
  FakeStream again("GET", "/", {{"Authorization", basic("alice:wonderland")}});
  EXPECT_EQ(h.requestHeaders(again), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(again.context["consumer"], "alice");

  for (const char* creds : {"alice:wrong", "nobody:wonderland"}) {
    FakeStream bad("GET", "/", {{"Authorization", basic(creds)}});
    EXPECT_EQ(drive(h, bad), SLUICE_FILTER_PAUSE) << creds;
    EXPECT_EQ(bad.resumed, 0);
    ASSERT_TRUE(bad.local_reply) << creds;
    EXPECT_EQ(bad.local_reply->status, 401u);
    EXPECT_EQ(bad.local_reply->body, R"({"error":"unauthorized","reason":"invalid credentials"})");
    EXPECT_EQ(bad.replyHeader("WWW-Authenticate"), "Basic realm=\"sluice\", charset=\"UTF-8\"");
  }
  // Malformed credentials need no crypt: answered in the hook.
  FakeStream malformed("GET", "/", {{"Authorization", "Basic %%%"}});
  EXPECT_EQ(h.requestHeaders(malformed), SLUICE_FILTER_STOP);
}

TEST_F(BasicAuthTest, ARequestThatEndedWhileVerifyingIsLeftAlone) {
  FilterHarness h(sluice_plugin_entry(), yaml("verify_threads: 1\n"));
  size_t ran = 0;
  {
    FakeStream gone("GET", "/", {{"Authorization", basic("bob:builder")}});
    EXPECT_EQ(h.requestHeaders(gone), SLUICE_FILTER_PAUSE);
  }  // the client went away: stream_destroy before the result is back
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ran == 0 && std::chrono::steady_clock::now() < deadline) {
    ran += FilterHarness::runPosts();  // the post runs with a NULL stream and does nothing
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ran, 1u);
}

TEST_F(BasicAuthTest, AFullVerificationQueueAnswers503) {
  // One thread, one waiting slot: of three verifications at least one finds no room.
  TempFile slow("slow:" + makeHash("$2b$", "pw", 10) + "\n");
  FilterHarness h(sluice_plugin_entry(),
                  "htpasswd_file: " + slow.path() + "\nverify_threads: 1\nverify_queue: 1\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream a("GET", "/", {{"Authorization", basic("slow:pw")}});
  FakeStream b("GET", "/", {{"Authorization", basic("slow:pw")}});
  FakeStream c("GET", "/", {{"Authorization", basic("slow:pw")}});
  int refused = 0;
  for (FakeStream* s : {&a, &b, &c}) {
    sluice_filter_status st = h.requestHeaders(*s);
    if (st == SLUICE_FILTER_STOP) {
      ++refused;
      ASSERT_TRUE(s->local_reply);
      EXPECT_EQ(s->local_reply->status, 503u);
      EXPECT_EQ(s->replyHeader("Retry-After"), "1");
      EXPECT_EQ(s->local_reply->body,
                R"({"error":"unavailable","reason":"verification overloaded"})");
    } else {
      EXPECT_EQ(st, SLUICE_FILTER_PAUSE);
    }
  }
  EXPECT_GE(refused, 1);
  EXPECT_LE(refused, 2);
  // The admitted ones complete.
  size_t done = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (done < static_cast<size_t>(3 - refused) && std::chrono::steady_clock::now() < deadline) {
    done += FilterHarness::runPosts();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(a.resumed + b.resumed + c.resumed, 3 - refused);
}

TEST(BasicAuthHashTest, RefusesHashesLibcryptCannotVerify) {
  std::string bcrypt = makeHash("$2b$", "x", 4);
  EXPECT_EQ(basic_auth::checkHash(bcrypt), "");
  EXPECT_EQ(basic_auth::checkHash(makeHash("$5$", "x")), "");
  EXPECT_EQ(basic_auth::checkHash(makeHash("$6$", "x")), "");
  EXPECT_EQ(basic_auth::checkHash(makeHash("$y$", "x")), "");
  for (const std::string& bad :
       {std::string("secret"), std::string("{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M="),
        std::string("$apr1$abcdefgh$0123456789abcdefghijkl"), makeHash("$1$", "x"),
        std::string("abJnggxhB/yWI"), bcrypt.substr(0, 59), makeHash("$6$", "x") + "A",
        std::string("$3$abc"), std::string("")}) {
    EXPECT_NE(basic_auth::checkHash(bad), "") << bad;
  }
}

TEST(BasicAuthConfigTest, RefusesBadFilesWithFileAndLine) {
  std::string good = makeHash("$2b$", "x", 4);
  struct Case {
    std::string text;
    std::string message;  // after "<path>:"
  };
  for (const Case& c : std::vector<Case>{
           {"a:" + good + "\n# c\nb:plaintext\n",
            "3: user 'b': not a crypt hash (plain-text passwords and DES crypt are refused; use "
            "bcrypt: htpasswd -B)"},
           {"a:$apr1$abcdefgh$0123456789abcdefghijkl\n",
            "1: user 'a': $apr1$ (Apache MD5) hashes are not supported by libcrypt; use bcrypt "
            "(htpasswd -B)"},
           {"a:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=\n",
            "1: user 'a': {SHA} hashes (unsalted SHA-1) are not supported; use bcrypt "
            "(htpasswd -B)"},
           {"a:" + good + "\nb:" + good + "\na:" + good + "\n",
            "3: duplicate user 'a' (first at line 1)"},
           {"\nnocolon\n", "2: expected 'user:hash'"},
           {":" + good + "\n", "1: empty user name"},
           {"a:" + good + ":extra\n", "1: unexpected ':' after the hash (expected 'user:hash')"},
           {"# only comments\n\n", " no users"},
       }) {
    TempFile f(c.text);
    FilterHarness h(sluice_plugin_entry(), "realm: x\nhtpasswd_file: " + f.path() + "\n");
    EXPECT_FALSE(h.configured()) << c.text;
    EXPECT_EQ(h.error(), f.path() + ":" + c.message);
    EXPECT_EQ(h.errorLine(), 2u) << "points at htpasswd_file";
  }
  TempFile valid("a:" + good + "\n");
  for (auto [yaml, message] : std::vector<std::pair<std::string, std::string>>{
           {"realm: x\n", "missing 'htpasswd_file'"},
           {"htpasswd_file: htpasswd\n", "cannot open '" +
                                             std::filesystem::current_path().string() +
                                             "/htpasswd': No such file or directory"},
           {"htpasswd_file: /nonexistent\n",
            "cannot open '/nonexistent': No such file or directory"},
           {"htpasswd_file: " + valid.path() + "\ncache_ttl_s: -1\n",
            "expected an integer from 0 to 86400"},
       }) {
    FilterHarness h(sluice_plugin_entry(), yaml);
    EXPECT_FALSE(h.configured()) << yaml;
    EXPECT_EQ(h.error(), message) << yaml;
  }
}

TEST(BasicAuthParseTest, DecodesUserAndPassword) {
  std::string user, password;
  EXPECT_EQ(parseBasicCredentials("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", &user, &password), "");
  EXPECT_EQ(user, "Aladdin");
  EXPECT_EQ(password, "open sesame");
  EXPECT_EQ(parseBasicCredentials("Basic Og==", &user, &password), "");  // ":"
  EXPECT_EQ(user, "");
  EXPECT_EQ(password, "");
  EXPECT_EQ(parseBasicCredentials("Basic QWxh=ZGRp", &user, &password), "malformed credentials");
  EXPECT_EQ(parseBasicCredentials("Digest x", &user, &password), "missing credentials");
}

}  // namespace
}  // namespace sluice::filters
