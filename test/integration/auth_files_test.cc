// The files the auth filters read (api_key_auth keys_file, basic_auth htpasswd_file), through
// the real binary: a relative path is taken from the config file's directory; an edit of the file
// with the YAML unchanged is picked up by a reload (SIGHUP, POST /reload) without failing a
// request of a keep-alive client; a file that cannot be read refuses the reload and the running
// keys keep working. And a key sent in a query parameter does not reach the upstream.
#include <crypt.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "filters/auth_common/auth_common.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

// One listener with `filter_yaml` as its only filter, in front of the echo cluster.
std::unique_ptr<Gateway> startGateway(const EchoBackend& backend, const std::string& filter_yaml) {
  return std::make_unique<Gateway>(R"(workers: 2
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

// Truncates and rewrites `path` in place (same inode), as an operator's editor may.
void writeInPlace(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  ASSERT_TRUE(out.good()) << path;
}

std::string baseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// Polls `probe` until it returns `want` (generous deadline for a loaded machine).
bool eventually(const std::function<int()>& probe, int want) {
  for (int i = 0; i < 300; ++i) {
    if (probe() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Sends requests one after another on one keep-alive connection until stopped; counts the
// answers that were not 200 and whether the connection ever broke.
class KeepAliveClient {
 public:
  KeepAliveClient(int port, Headers headers) : conn_(port) {
    thread_ = std::thread([this, port, headers] {
      while (!stop_) {
        if (!conn_.send(buildRequest("GET", "/gateway/echo/steady", headers, "", port))) {
          broken_ = true;
          return;
        }
        Response r = conn_.readResponse();
        if (!r.complete) {
          broken_ = true;
          return;
        }
        ++sent_;
        if (r.status != 200) ++failed_;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  ~KeepAliveClient() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool connected() const { return conn_.connected(); }
  int sent() const { return sent_; }
  int failed() const { return failed_; }
  bool broken() const { return broken_; }

 private:
  RawConnection conn_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> broken_{false};
  std::atomic<int> sent_{0};
  std::atomic<int> failed_{0};
};

int keyStatus(const Gateway& gw, const std::string& key) {
  return httpGet(gw.port(), "/gateway/echo/x", {{"X-Api-Key", key}}).status;
}

class AuthFilesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { backend_ = std::make_unique<EchoBackend>("echo"); }
  static void TearDownTestSuite() { backend_.reset(); }
  static inline std::unique_ptr<EchoBackend> backend_;
};

TEST_F(AuthFilesTest, KeysFileEditedInPlaceIsReloadedOnSighup) {
  // Relative to the config file's directory (the Gateway writes its config there too).
  std::string keys = uniqueTmpPath("api-keys");
  writeInPlace(keys, "alice key-of-alice\nbob key-of-bob\n");
  auto gw = startGateway(*backend_, R"(
      - name: api_key_auth
        config:
          keys_file: )" + baseName(keys));
  ASSERT_TRUE(gw->ready());
  ASSERT_EQ(std::filesystem::path(gw->configPath()).parent_path(),
            std::filesystem::path(keys).parent_path());
  EXPECT_EQ(keyStatus(*gw, "key-of-bob"), 200);
  EXPECT_EQ(keyStatus(*gw, "key-of-carol"), 401);

  KeepAliveClient steady(gw->port(), {{"X-Api-Key", "key-of-alice"}});
  ASSERT_TRUE(steady.connected());
  ASSERT_TRUE(eventually([&] { return steady.sent() >= 3 ? 1 : 0; }, 1));

  // Same YAML; the file changes: bob goes, carol comes, alice stays.
  std::string yaml_before = readFile(gw->configPath());
  writeInPlace(keys, "alice key-of-alice\ncarol key-of-carol\n");
  ASSERT_TRUE(gw->process().signal(SIGHUP));
  EXPECT_TRUE(eventually([&] { return keyStatus(*gw, "key-of-carol"); }, 200))
      << "the new key is not admitted after SIGHUP";
  EXPECT_EQ(keyStatus(*gw, "key-of-bob"), 401) << "the removed key still works";
  EXPECT_EQ(readFile(gw->configPath()), yaml_before);

  // The keep-alive client went on through the reload, on its connection, without a failure;
  // its requests after the reload run the new chain too.
  int before = steady.sent();
  ASSERT_TRUE(eventually([&] { return steady.sent() >= before + 3 ? 1 : 0; }, 1));
  steady.stop();
  EXPECT_FALSE(steady.broken()) << "the keep-alive connection broke";
  EXPECT_EQ(steady.failed(), 0) << "of " << steady.sent();

  // The reload said why it rebuilt the filter (admin /config: last_reload.changes).
  Response config = httpGet(gw->adminPort(), "/config");
  EXPECT_NE(
      config.body.find("listener 'edge': filter 'api_key_auth' rebuilt: " + keys + " changed"),
      std::string::npos)
      << config.body.substr(0, 2000);
}

// A hash of `password` made with libcrypt (bcrypt, cost 5: quick, still bcrypt).
std::string bcrypt(const std::string& password) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2b$", 5, nullptr, 0, setting, sizeof(setting)), nullptr);
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

TEST_F(AuthFilesTest, HtpasswdEditedInPlaceIsReloadedOnPostReload) {
  std::string htpasswd = uniqueTmpPath("htpasswd");
  writeInPlace(htpasswd, "alice:" + bcrypt("old pw") + "\nbob:" + bcrypt("b0b") + "\n");
  auto gw = startGateway(*backend_, R"(
      - name: basic_auth
        config:
          htpasswd_file: )" + baseName(htpasswd));
  ASSERT_TRUE(gw->ready());
  auto status = [&](const std::string& credentials) {
    return httpGet(gw->port(), "/gateway/echo/x", {{"Authorization", basicHeader(credentials)}})
        .status;
  };
  EXPECT_EQ(status("alice:old pw"), 200);
  EXPECT_EQ(status("bob:b0b"), 200);

  KeepAliveClient steady(gw->port(), {{"Authorization", basicHeader("alice:old pw")}});
  ASSERT_TRUE(eventually([&] { return steady.sent() >= 3 ? 1 : 0; }, 1));
  // bob leaves; alice keeps her password (same hash line) and carol comes.
  std::string alice_line = readFile(htpasswd).substr(0, readFile(htpasswd).find('\n') + 1);
  writeInPlace(htpasswd, alice_line + "carol:" + bcrypt("c4rol") + "\n");
  Response reload = httpRequest(gw->adminPort(), "POST", "/reload");
  EXPECT_EQ(reload.status, 200) << reload.body;
  EXPECT_NE(
      reload.body.find("listener 'edge': filter 'basic_auth' rebuilt: " + htpasswd + " changed"),
      std::string::npos)
      << reload.body;
  EXPECT_TRUE(eventually([&] { return status("carol:c4rol"); }, 200));
  EXPECT_EQ(status("bob:b0b"), 401);
  int before = steady.sent();
  ASSERT_TRUE(eventually([&] { return steady.sent() >= before + 3 ? 1 : 0; }, 1));
  steady.stop();
  EXPECT_FALSE(steady.broken());
  EXPECT_EQ(steady.failed(), 0) << "of " << steady.sent();

  // Nothing changed: a reload keeps the running instance (and says nothing about the file).
  Response again = httpRequest(gw->adminPort(), "POST", "/reload");
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.body.find("rebuilt"), std::string::npos) << again.body;
}

TEST_F(AuthFilesTest, UnreadableKeysFileRefusesTheReloadAndOldKeysKeepWorking) {
  std::string keys = uniqueTmpPath("api-keys");
  writeInPlace(keys, "alice key-of-alice\n");
  auto gw = startGateway(*backend_, R"(
      - name: api_key_auth
        config:
          keys_file: )" + baseName(keys));
  ASSERT_TRUE(gw->ready());
  EXPECT_EQ(keyStatus(*gw, "key-of-alice"), 200);

  // Gone (a deploy that moved it away); chmod 000 would not stop a test running as root.
  std::string moved = keys + ".moved";
  ASSERT_EQ(std::rename(keys.c_str(), moved.c_str()), 0);
  Response reload = httpRequest(gw->adminPort(), "POST", "/reload");
  EXPECT_EQ(reload.status, 400) << reload.body;
  EXPECT_NE(reload.body.find("cannot open '" + keys + "': No such file or directory"),
            std::string::npos)
      << reload.body;
  EXPECT_EQ(keyStatus(*gw, "key-of-alice"), 200) << "the running config stopped serving";

  // A SIGHUP the same; then the file is back with other content and the reload goes through.
  ASSERT_TRUE(gw->process().signal(SIGHUP));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(keyStatus(*gw, "key-of-alice"), 200);
  ASSERT_EQ(std::rename(moved.c_str(), keys.c_str()), 0);
  writeInPlace(keys, "dave key-of-dave\n");
  ASSERT_TRUE(gw->process().signal(SIGHUP));
  EXPECT_TRUE(eventually([&] { return keyStatus(*gw, "key-of-dave"); }, 200));
  EXPECT_EQ(keyStatus(*gw, "key-of-alice"), 401);
}

// A route's own filter entry (routes[].filters) reading a file: its chain is rebuilt the same.
TEST_F(AuthFilesTest, RouteChainIsRebuiltWhenItsKeysFileChanges) {
  std::string keys = uniqueTmpPath("route-keys");
  writeInPlace(keys, "bob key-of-bob\n");
  Gateway gw(R"(workers: 2
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - name: private
    prefix: /private
    cluster: echo
    filters:
      - name: api_key_auth
        config: {keys_file: ${KEYS}}
  - prefix: /public
    cluster: echo
)",
             {{"BACKEND", backend_->address()}, {"KEYS", baseName(keys)}});
  ASSERT_TRUE(gw.ready());
  auto status = [&](const std::string& key) {
    return httpGet(gw.port(), "/private/x", {{"X-Api-Key", key}}).status;
  };
  EXPECT_EQ(status("key-of-bob"), 200);
  EXPECT_EQ(httpGet(gw.port(), "/public/x").status, 200);
  writeInPlace(keys, "carol key-of-carol\n");
  Response reload = httpRequest(gw.adminPort(), "POST", "/reload");
  EXPECT_EQ(reload.status, 200) << reload.body;
  EXPECT_NE(reload.body.find("route 'private' on listener 'edge': filter 'api_key_auth' "
                             "rebuilt: " +
                             keys + " changed"),
            std::string::npos)
      << reload.body;
  EXPECT_TRUE(eventually([&] { return status("key-of-carol"); }, 200));
  EXPECT_EQ(status("key-of-bob"), 401);
}

// watch_config also watches the files the filters depend on: an edit reloads by itself.
TEST_F(AuthFilesTest, WatchConfigReloadsWhenAKeysFileChanges) {
  std::string keys = uniqueTmpPath("watched-keys");
  writeInPlace(keys, "bob key-of-bob\n");
  Gateway gw(R"(workers: 1
watch_config: true
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
      - name: api_key_auth
        config: {keys_file: ${KEYS}}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)",
             {{"BACKEND", backend_->address()}, {"KEYS", keys}});
  ASSERT_TRUE(gw.ready());
  EXPECT_EQ(keyStatus(gw, "key-of-bob"), 200);
  writeInPlace(keys, "carol key-of-carol\n");
  EXPECT_TRUE(eventually([&] { return keyStatus(gw, "key-of-carol"); }, 200))
      << "no reload after the keys file changed";
  EXPECT_EQ(keyStatus(gw, "key-of-bob"), 401);
}

TEST_F(AuthFilesTest, QueryParameterKeyIsNotForwardedUpstream) {
  auto gw = startGateway(*backend_, R"(
      - name: api_key_auth
        config:
          keys: [{key: "k/1 2", consumer: alice}]
          query_param: api_key)");
  ASSERT_TRUE(gw->ready());
  // What the upstream gets for the same target without the key parameter.
  Response plain = httpGet(gw->port(), "/gateway/echo/x?a=1&b=%2F+c&d", {{"X-Api-Key", "k/1 2"}});
  ASSERT_EQ(plain.status, 200) << plain.body;
  std::optional<std::string> want = echoString(plain.body, "path");
  ASSERT_TRUE(want.has_value()) << plain.body;
  EXPECT_NE(want->find("?a=1&b=%2F+c&d"), std::string::npos) << *want;

  Response ok = httpGet(gw->port(), "/gateway/echo/x?a=1&api_key=k%2F1+2&b=%2F+c&d");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(echoString(ok.body, "path"), want) << "the upstream saw: " << ok.body;
  EXPECT_EQ(echoHeaderValues(ok.body, "X-Consumer"), std::vector<std::string>{"alice"});
  EXPECT_EQ(ok.body.find("k%2F1"), std::string::npos) << ok.body;

  Response only = httpGet(gw->port(), "/gateway/echo/x?api_key=k%2F1+2");
  ASSERT_EQ(only.status, 200) << only.body;
  std::optional<std::string> path = echoString(only.body, "path");
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->find('?'), std::string::npos) << *path;
}

}  // namespace
}  // namespace sluice::test
