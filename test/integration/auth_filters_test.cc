// The auth filter plugins (api_key_auth, basic_auth, jwt_auth) loaded by the real binary from
// their .so files, in front of a real echo backend: what the client gets without and with
// credentials, and what the upstream sees (the consumer header, never the credential).
#include <crypt.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "filters/auth_common/auth_common.h"
#include "test/filters/jwt_auth/jwt_test_util.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
namespace tj = testing::jwt;

// One listener with `filter_yaml` as its only filter, in front of the echo cluster.
std::unique_ptr<Gateway> startGateway(const EchoBackend& backend, const std::string& filter_yaml,
                                      int workers = 2) {
  return std::make_unique<Gateway>("workers: " + std::to_string(workers) + R"(
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
)" + filter_yaml + R"(
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)",
                                   std::map<std::string, std::string>{
                                       {"BACKEND", backend.address()}});
}

std::string writeTemp(const std::string& name, const std::string& text) {
  std::string path = uniqueTmpPath(name);
  EXPECT_TRUE(writeFile(path, text));
  return path;
}

// The 401 of an auth filter: JSON body with this reason.
::testing::AssertionResult isUnauthorized(const Response& r, const std::string& reason) {
  if (!r.complete) return ::testing::AssertionFailure() << "incomplete: " << r.error;
  if (r.status != 401) return ::testing::AssertionFailure() << "status " << r.status << r.body;
  if (r.header("Content-Type").rfind("application/json", 0) != 0) {
    return ::testing::AssertionFailure() << "Content-Type " << r.header("Content-Type");
  }
  Json body = Json::parse(r.body, nullptr, false);
  if (body.is_discarded() || body.value("reason", "") != reason ||
      body.value("error", "") != "unauthorized") {
    return ::testing::AssertionFailure() << "body " << r.body;
  }
  return ::testing::AssertionSuccess();
}

class AuthFiltersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { backend_ = std::make_unique<EchoBackend>("echo"); }
  static void TearDownTestSuite() { backend_.reset(); }
  static inline std::unique_ptr<EchoBackend> backend_;
};

TEST_F(AuthFiltersTest, ApiKeyAuth) {
  std::string keys = writeTemp("api-keys", "# consumer key\nbob key-of-bob\n");
  auto gw = startGateway(*backend_, R"(
      - name: api_key_auth
        config:
          keys: [{key: key-of-alice, consumer: alice}]
          keys_file: )" + keys + R"(
          query_param: api_key
          www_authenticate: 'ApiKey realm="edge"')");
  ASSERT_TRUE(gw->ready());

  Response none = httpGet(gw->port(), "/gateway/echo/x");
  EXPECT_TRUE(isUnauthorized(none, "missing api key"));
  EXPECT_EQ(none.header("WWW-Authenticate"), "ApiKey realm=\"edge\"");
  Response wrong = httpGet(gw->port(), "/gateway/echo/x", {{"X-Api-Key", "key-of-mallory"}});
  EXPECT_TRUE(isUnauthorized(wrong, "invalid api key"));

  Response ok = httpGet(gw->port(), "/gateway/echo/x",
                        {{"X-Api-Key", "key-of-alice"}, {"X-Consumer", "admin"}});
  ASSERT_TRUE(ok.complete) << ok.error;
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(echoHeaderValues(ok.body, "X-Consumer"), std::vector<std::string>{"alice"});
  EXPECT_TRUE(echoHeaderValues(ok.body, "X-Api-Key").empty()) << ok.body;

  Response from_file = httpGet(gw->port(), "/gateway/echo/x?api_key=key%2Dof%2Dbob");
  EXPECT_EQ(from_file.status, 200) << from_file.body;
  EXPECT_EQ(echoHeaderValues(from_file.body, "X-Consumer"), std::vector<std::string>{"bob"});

  // A local 401 keeps the connection open for the next request (issue 9).
  RawConnection conn(gw->port());
  ASSERT_TRUE(conn.send(
      buildRequest("GET", "/gateway/echo/1", {}, "", gw->port()) +
      buildRequest("GET", "/gateway/echo/2", {{"X-Api-Key", "key-of-bob"}}, "", gw->port())));
  Response first = conn.readResponse();
  Response second = conn.readResponse();
  EXPECT_TRUE(isUnauthorized(first, "missing api key"));
  EXPECT_EQ(second.status, 200) << second.error;

  // Decision counters, summed over both workers.
  std::string scrape = httpGet(gw->adminPort(), "/stats/prometheus").body;
  EXPECT_NE(scrape.find("sluice_plugin_api_key_auth_denied_total{reason=\"missing_api_key\"} 2"),
            std::string::npos)
      << scrape;
  EXPECT_NE(scrape.find("sluice_plugin_api_key_auth_denied_total{reason=\"invalid_api_key\"} 1"),
            std::string::npos)
      << scrape;
  EXPECT_NE(scrape.find("sluice_plugin_api_key_auth_allowed_total 3"), std::string::npos) << scrape;

  // The keys file is read when the config is (re)loaded: a reload whose filter config names a
  // new file serves the new keys. (An edit of the same file under an unchanged YAML works too:
  // auth_files_test.cc.)
  std::string new_keys = writeTemp("api-keys", "carol key-of-carol\n");
  std::string yaml = readFile(gw->configPath());
  ASSERT_NE(yaml.find(keys), std::string::npos);
  yaml.replace(yaml.find(keys), keys.size(), new_keys);
  ASSERT_TRUE(writeFile(gw->configPath(), yaml));
  ASSERT_TRUE(gw->process().signal(SIGHUP));
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = httpGet(gw->port(), "/gateway/echo/x", {{"X-Api-Key", "key-of-carol"}}).status;
  }
  EXPECT_EQ(status, 200) << "new key not admitted after reload";
  EXPECT_EQ(httpGet(gw->port(), "/gateway/echo/x", {{"X-Api-Key", "key-of-bob"}}).status, 401);
}

// A hash of `password` made with libcrypt (bcrypt at cost 5 by default: quick, still bcrypt).
std::string bcrypt(const std::string& password, unsigned long cost = 5) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2b$", cost, nullptr, 0, setting, sizeof(setting)), nullptr);
  crypt_data data;
  std::memset(&data, 0, sizeof(data));
  const char* hash = crypt_rn(password.c_str(), setting, &data, sizeof(data));
  EXPECT_NE(hash, nullptr);
  return hash != nullptr ? hash : "";
}

std::string basicHeader(const std::string& credentials) {
  std::string b = filters::auth::base64UrlEncode(credentials);
  for (char& c : b) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (b.size() % 4 != 0) b.push_back('=');
  return "Basic " + b;
}

TEST_F(AuthFiltersTest, BasicAuth) {
  std::string htpasswd =
      writeTemp("htpasswd", "alice:" + bcrypt("wonder land") + "\nbob:" + bcrypt("b0b") + "\n");
  auto gw = startGateway(*backend_, R"(
      - name: basic_auth
        config:
          htpasswd_file: )" + htpasswd + R"(
          realm: staff)");
  ASSERT_TRUE(gw->ready());

  Response none = httpGet(gw->port(), "/gateway/echo/x");
  EXPECT_TRUE(isUnauthorized(none, "missing credentials"));
  EXPECT_EQ(none.header("WWW-Authenticate"), "Basic realm=\"staff\", charset=\"UTF-8\"");
  EXPECT_TRUE(isUnauthorized(
      httpGet(gw->port(), "/gateway/echo/x", {{"Authorization", basicHeader("alice:wrong")}}),
      "invalid credentials"));
  EXPECT_TRUE(isUnauthorized(
      httpGet(gw->port(), "/gateway/echo/x", {{"Authorization", "Basic not-base64!"}}),
      "malformed credentials"));

  for (int i = 0; i < 3; ++i) {  // the later ones from the per-worker cache
    Response ok =
        httpGet(gw->port(), "/gateway/echo/x",
                {{"Authorization", basicHeader("alice:wonder land")}, {"X-Consumer", "admin"}});
    ASSERT_TRUE(ok.complete) << ok.error;
    EXPECT_EQ(ok.status, 200) << ok.body;
    EXPECT_EQ(echoHeaderValues(ok.body, "X-Consumer"), std::vector<std::string>{"alice"});
    EXPECT_TRUE(echoHeaderValues(ok.body, "Authorization").empty()) << ok.body;
  }
}

// bcrypt runs on the filter's verification threads, not on the worker's event loop: with one
// worker, a request answered without crypt is not held up behind a slow (cost 13) verification.
TEST_F(AuthFiltersTest, BasicAuthDoesNotBlockTheWorker) {
  std::string htpasswd = writeTemp("htpasswd", "slow:" + bcrypt("pw", 13) + "\n");
  auto gw = startGateway(*backend_, R"(
      - name: basic_auth
        config:
          htpasswd_file: )" + htpasswd,
                         1);
  ASSERT_TRUE(gw->ready());
  std::atomic<int> order{0};
  int slow_done = 0;
  std::thread slow([&] {
    Response r = httpRequest(gw->port(), "GET", "/gateway/echo/x",
                             {{"Authorization", basicHeader("slow:pw")}}, "", 60000);
    EXPECT_EQ(r.status, 200) << r.error;
    slow_done = ++order;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the slow one start
  Response quick = httpGet(gw->port(), "/gateway/echo/x", {{"Authorization", "Basic ???"}});
  int quick_done = ++order;
  slow.join();
  EXPECT_TRUE(isUnauthorized(quick, "malformed credentials"));
  EXPECT_EQ(quick_done, 1) << "the 401 waited for the other request's bcrypt";
  EXPECT_EQ(slow_done, 2);
}

// The header calls by resolved name (ABI 1.4 handles) in the real host: every client copy of a
// custom consumer header, in any letter case, replaced by the user name; Authorization kept with
// strip_credential: false, and two Authorization fields refused.
TEST_F(AuthFiltersTest, BasicAuthHeadersByHandle) {
  std::string htpasswd = writeTemp("htpasswd", "alice:" + bcrypt("pw") + "\n");
  auto gw = startGateway(*backend_, R"(
      - name: basic_auth
        config:
          htpasswd_file: )" + htpasswd + R"(
          consumer_header: X-Basic-User
          strip_credential: false)");
  ASSERT_TRUE(gw->ready());
  const std::string credentials = basicHeader("alice:pw");
  Response ok = httpGet(
      gw->port(), "/gateway/echo/x",
      {{"x-basic-user", "admin"}, {"Authorization", credentials}, {"X-BASIC-USER", "root"}});
  ASSERT_TRUE(ok.complete) << ok.error;
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(echoHeaderValues(ok.body, "X-Basic-User"), std::vector<std::string>{"alice"});
  EXPECT_EQ(echoHeaderValues(ok.body, "Authorization"), std::vector<std::string>{credentials});
  EXPECT_TRUE(
      isUnauthorized(httpGet(gw->port(), "/gateway/echo/x",
                             {{"Authorization", credentials}, {"authorization", credentials}}),
                     "malformed credentials"));
}

TEST_F(AuthFiltersTest, JwtAuthHs256AndRs256FromJwks) {
  tj::Pkey rsa = tj::generateRsa(2048);
  const std::string secret = "integration-test-hmac-secret-0123456789";
  Json jwks = {
      {"keys",
       {tj::publicJwk(rsa.get(), "rsa-1"),
        {{"kty", "oct"}, {"kid", "hs-1"}, {"k", filters::auth::base64UrlEncode(secret)}}}}};
  std::string jwks_file = writeTemp("jwks.json", jwks.dump());
  auto gw = startGateway(*backend_, R"(
      - name: jwt_auth
        config:
          algorithms: [RS256, HS256]
          jwks_file: )" + jwks_file + R"(
          issuers: [https://idp.test]
          audiences: [edge]
          realm: edge
          forward_claims: [{claim: tenant, header: X-Tenant}])");
  ASSERT_TRUE(gw->ready());

  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  Json claims = {{"sub", "user-7"}, {"iss", "https://idp.test"},
                 {"aud", "edge"},   {"exp", now + 600},
                 {"nbf", now - 5},  {"tenant", "acme"}};

  Response none = httpGet(gw->port(), "/gateway/echo/x");
  EXPECT_TRUE(isUnauthorized(none, "missing token"));
  EXPECT_EQ(none.header("WWW-Authenticate"), "Bearer realm=\"edge\"");

  Json expired = claims;
  expired["exp"] = now - 3600;
  Response old = httpGet(
      gw->port(), "/gateway/echo/x",
      {{"Authorization", "Bearer " + tj::signWithKey(rsa.get(), {{"kid", "rsa-1"}}, expired)}});
  EXPECT_TRUE(isUnauthorized(old, "token expired"));
  EXPECT_EQ(old.header("WWW-Authenticate"),
            "Bearer realm=\"edge\", error=\"invalid_token\", error_description=\"token expired\"");

  std::string confused = tj::signWithSecret(tj::publicPem(rsa.get()), {{"kid", "rsa-1"}}, claims);
  EXPECT_TRUE(isUnauthorized(
      httpGet(gw->port(), "/gateway/echo/x", {{"Authorization", "Bearer " + confused}}),
      "unknown key id"));

  for (const std::string& token : {tj::signWithKey(rsa.get(), {{"kid", "rsa-1"}}, claims),
                                   tj::signWithSecret(secret, {{"kid", "hs-1"}}, claims)}) {
    Response ok = httpGet(
        gw->port(), "/gateway/echo/x",
        {{"Authorization", "Bearer " + token}, {"X-Consumer", "admin"}, {"X-Tenant", "evil"}});
    ASSERT_TRUE(ok.complete) << ok.error;
    EXPECT_EQ(ok.status, 200) << ok.body;
    EXPECT_EQ(echoHeaderValues(ok.body, "X-Consumer"), std::vector<std::string>{"user-7"});
    EXPECT_EQ(echoHeaderValues(ok.body, "X-Tenant"), std::vector<std::string>{"acme"});
    EXPECT_TRUE(echoHeaderValues(ok.body, "Authorization").empty()) << ok.body;
  }
}

// The header calls by resolved name (ABI 1.4 handles) in the real host: the token read from and
// removed in a custom header (two fields refused, Authorization not read); every client copy of
// the consumer and claim headers, in any letter case, removed, also when the token has no value
// to put there; the forwarded claim set.
TEST_F(AuthFiltersTest, JwtAuthHeadersByHandle) {
  const std::string secret = "handle-test-hmac-secret-0123456789abcdef";
  auto gw = startGateway(*backend_, R"(
      - name: jwt_auth
        config:
          algorithms: [HS256]
          secret: )" + secret + R"(
          header: X-Token
          consumer_header: X-Jwt-Sub
          forward_claims: [{claim: tenant, header: X-Tenant}, {claim: role, header: X-Role}])");
  ASSERT_TRUE(gw->ready());
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  std::string token = tj::signWithSecret(
      secret, Json::object(), {{"sub", "user-1"}, {"tenant", "acme"}, {"exp", now + 600}});
  Response ok = httpGet(gw->port(), "/gateway/echo/x",
                        {{"x-jwt-sub", "admin"},
                         {"X-Token", token},
                         {"X-JWT-SUB", "root"},
                         {"x-tenant", "evil"},
                         {"X-Role", "admin"},
                         {"x-role", "root"}});
  ASSERT_TRUE(ok.complete) << ok.error;
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(echoHeaderValues(ok.body, "X-Jwt-Sub"), std::vector<std::string>{"user-1"});
  EXPECT_EQ(echoHeaderValues(ok.body, "X-Tenant"), std::vector<std::string>{"acme"});
  EXPECT_TRUE(echoHeaderValues(ok.body, "X-Role").empty()) << "forged claim header kept";
  EXPECT_TRUE(echoHeaderValues(ok.body, "X-Token").empty()) << "token forwarded";

  std::string no_sub = tj::signWithSecret(secret, Json::object(), {{"exp", now + 600}});
  Response anonymous = httpGet(gw->port(), "/gateway/echo/x",
                               {{"X-Token", no_sub}, {"X-Jwt-Sub", "admin"}, {"X-Tenant", "evil"}});
  EXPECT_EQ(anonymous.status, 200) << anonymous.body;
  EXPECT_TRUE(echoHeaderValues(anonymous.body, "X-Jwt-Sub").empty()) << "forged consumer kept";
  EXPECT_TRUE(echoHeaderValues(anonymous.body, "X-Tenant").empty()) << "forged claim header kept";

  EXPECT_TRUE(isUnauthorized(
      httpGet(gw->port(), "/gateway/echo/x", {{"X-Token", token}, {"x-token", token}}),
      "malformed token"));
  EXPECT_TRUE(
      isUnauthorized(httpGet(gw->port(), "/gateway/echo/x", {{"Authorization", "Bearer " + token}}),
                     "missing token"));
}

// Per route: a public route disables the listener's api_key_auth, another gives it its own keys
// (per-route config), a third adds jwt_auth after it; the context the first filter filled is
// what the route's chain sees.
TEST_F(AuthFiltersTest, RoutesDisableOrReconfigureAuth) {
  const std::string secret = "route-test-hmac-secret-0123456789abcdef";
  auto gw = std::make_unique<Gateway>(
      R"(
workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: api_key_auth
        config: {keys: [{key: listener-key, consumer: alice}]}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - name: public
    prefix: /public
    cluster: echo
    filters: [{name: api_key_auth, disabled: true}]
  - name: admin
    prefix: /admin
    cluster: echo
    filters:
      - name: api_key_auth
        config: {keys: [{key: admin-key, consumer: root}]}
  - name: api
    prefix: /api
    cluster: echo
    filters:
      - name: jwt_auth
        config: {algorithms: [HS256], secret: ${SECRET}, consumer_header: X-Jwt-Sub}
  - prefix: /
    cluster: echo
)",
      std::map<std::string, std::string>{{"BACKEND", backend_->address()}, {"SECRET", secret}});
  ASSERT_TRUE(gw->ready());
  int port = gw->port();
  EXPECT_EQ(httpGet(port, "/public/x").status, 200);
  EXPECT_TRUE(isUnauthorized(httpGet(port, "/other"), "missing api key"));
  EXPECT_EQ(httpGet(port, "/other", {{"X-Api-Key", "listener-key"}}).status, 200);
  EXPECT_TRUE(isUnauthorized(httpGet(port, "/admin/x", {{"X-Api-Key", "listener-key"}}),
                             "invalid api key"));
  Response admin = httpGet(port, "/admin/x", {{"X-Api-Key", "admin-key"}});
  EXPECT_EQ(admin.status, 200);
  EXPECT_EQ(echoHeaderValues(admin.body, "X-Consumer"), std::vector<std::string>{"root"});

  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  std::string token =
      tj::signWithSecret(secret, Json::object(), {{"sub", "bob"}, {"exp", now + 60}});
  EXPECT_TRUE(isUnauthorized(httpGet(port, "/api/x", {{"Authorization", "Bearer " + token}}),
                             "missing api key"))
      << "the listener's api_key_auth runs first";
  EXPECT_TRUE(
      isUnauthorized(httpGet(port, "/api/x", {{"X-Api-Key", "listener-key"}}), "missing token"));
  Response both = httpGet(port, "/api/x",
                          {{"X-Api-Key", "listener-key"}, {"Authorization", "Bearer " + token}});
  EXPECT_EQ(both.status, 200) << both.body;
  EXPECT_EQ(echoHeaderValues(both.body, "X-Consumer"), std::vector<std::string>{"alice"});
  EXPECT_EQ(echoHeaderValues(both.body, "X-Jwt-Sub"), std::vector<std::string>{"bob"});
}

// The consumer an auth filter names is what a later filter keys on: rate_limit by consumer
// gives each API key its own bucket.
TEST_F(AuthFiltersTest, ConsumerFeedsRateLimit) {
  auto gw = startGateway(*backend_, R"(
      - name: api_key_auth
        config: {keys: [{key: ka, consumer: alice}, {key: kb, consumer: bob}]}
      - name: rate_limit
        config: {rate: 1, per: hour, burst: 2, key: consumer})");
  ASSERT_TRUE(gw->ready());
  auto get = [&](const char* key) {
    return httpGet(gw->port(), "/gateway/echo/x", {{"X-Api-Key", key}}).status;
  };
  EXPECT_EQ(get("ka"), 200);
  EXPECT_EQ(get("ka"), 200);
  EXPECT_EQ(get("ka"), 429) << "alice's bucket of 2 is empty";
  EXPECT_EQ(get("kb"), 200) << "bob has his own bucket";
  EXPECT_EQ(get("nope"), 401) << "refused before rate_limit";
}

// Bad credential files are refused when the config is loaded, with the config's file:line:col
// and the credential file's own line.
TEST_F(AuthFiltersTest, BadCredentialFilesAreRefusedAtValidate) {
  std::string htpasswd = writeTemp("htpasswd", "# staff\nalice:" + bcrypt("x") + "\nbob:secret\n");
  std::string keys = writeTemp("api-keys", "alice k1\nbob k1\n");
  std::string yaml = substitute(R"(workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: a
    address: 127.0.0.1:${PORT}
    filters:
      - name: basic_auth
        config:
          htpasswd_file: ${HTPASSWD}
  - name: b
    address: 127.0.0.1:${PORT2}
    filters:
      - name: api_key_auth
        config:
          keys_file: ${KEYS}
clusters:
  - name: echo
    endpoints: [127.0.0.1:2]
)",
                                {{"PLUGINS", pluginPathsYaml()},
                                 {"PORT", std::to_string(freePort())},
                                 {"PORT2", std::to_string(freePort())},
                                 {"HTPASSWD", htpasswd},
                                 {"KEYS", keys}});
  TempConfig config(yaml, "auth-validate.yaml");
  Process p({runfile("core/sluice"), "--validate", "-c", config.path()});
  EXPECT_EQ(p.waitExit(20000), 1);
  std::string out = p.output();
  EXPECT_NE(out.find(config.path() + ":9:26: plugin 'basic_auth'"), std::string::npos) << out;
  EXPECT_NE(out.find(htpasswd +
                     ":3: user 'bob': not a crypt hash (plain-text passwords and DES crypt are "
                     "refused; use bcrypt: htpasswd -B)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(config.path() + ":15:22: plugin 'api_key_auth'"), std::string::npos) << out;
  EXPECT_NE(out.find(keys + ":2: duplicate key (first at " + keys + ":1)"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace sluice::test
