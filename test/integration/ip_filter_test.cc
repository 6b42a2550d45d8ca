// ip_filter through the real binary: loopback clients admitted or refused by CIDR lists, from a
// second loopback source address, and the client taken from X-Forwarded-For at a trusted depth —
// which pins that sluice appends the peer to X-Forwarded-For before the filters run.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
plugin_paths: ${PLUGINS}
admin: { address: 127.0.0.1:${ADMIN} }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters:
      - name: ip_filter
        config:
${FILTER}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

// The status of a GET on a fresh connection from `source_ip` (a loopback address other than
// 127.0.0.1 reaches the listener on 127.0.0.1 too); 0 on failure.
int statusFrom(const char* source_ip, int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, source_ip, &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  std::string request = buildRequest("GET", path, {{"Connection", "close"}}, "", port);
  std::string got;
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) == 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    pollfd p{fd, POLLIN, 0};
    while (got.find("\r\n") == std::string::npos && poll(&p, 1, 10000) > 0) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  // "HTTP/1.1 NNN ..."
  if (got.size() < 12 || got.compare(0, 5, "HTTP/") != 0) return 0;
  return std::atoi(got.c_str() + 9);
}

class IpFilterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { backend_ = std::make_unique<EchoBackend>("echo"); }
  static void TearDownTestSuite() { backend_.reset(); }

  static std::unique_ptr<Gateway> start(const std::string& filter_yaml) {
    auto g = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"BACKEND", backend_->address()},
                                                    {"FILTER", filter_yaml}});
    EXPECT_TRUE(g->ready());
    return g;
  }

  static inline std::unique_ptr<EchoBackend> backend_;
};

TEST_F(IpFilterTest, DeniedLoopbackRangeGets403) {
  auto g = start("          deny: [127.0.0.0/8, '::1']\n");
  ASSERT_TRUE(g->ready());
  Response r = httpGet(g->port(), "/gateway/echo/x");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(r.body, "{\"status\":403,\"error\":\"Forbidden\"}\n");
  EXPECT_EQ(upstreamRequests(g->adminPort()), 0) << "a refused request never goes upstream";
}

TEST_F(IpFilterTest, AllowListAdmitsLoopbackAndDenyWinsForOneAddress) {
  auto g = start("          allow: [127.0.0.0/8]\n          deny: [127.0.0.2]\n");
  ASSERT_TRUE(g->ready());
  Response r = httpGet(g->port(), "/gateway/echo/x");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(echoString(r.body, "backend"), "echo");
  EXPECT_EQ(statusFrom("127.0.0.1", g->port(), "/gateway/echo/x"), 200);
  EXPECT_EQ(statusFrom("127.0.0.2", g->port(), "/gateway/echo/x"), 403);
  EXPECT_EQ(statusFrom("127.0.0.3", g->port(), "/gateway/echo/x"), 200);
}

TEST_F(IpFilterTest, AddressOutsideTheAllowListGets403) {
  auto g = start("          allow: [192.0.2.0/24]\n");
  ASSERT_TRUE(g->ready());
  EXPECT_EQ(httpGet(g->port(), "/gateway/echo/x").status, 403);
}

// trusted_xff_depth: 1 = one proxy (a load balancer) in front of sluice. The client sends
// X-Forwarded-For as the load balancer would have written it; sluice appends 127.0.0.1 (the
// peer) before the filters run, so the filter sees "<client>, 127.0.0.1" and takes the entry
// left of sluice's. If sluice did not append, the rightmost entry would not be the peer and every
// request here would be refused.
TEST_F(IpFilterTest, TrustedXffDepthCountsSluicesOwnEntry) {
  auto g = start(
      "          allow: [198.51.100.0/24]\n          deny: [198.51.100.66]\n"
      "          trusted_xff_depth: 1\n");
  ASSERT_TRUE(g->ready());
  Response ok = httpGet(g->port(), "/gateway/echo/x", {{"X-Forwarded-For", "198.51.100.7"}});
  ASSERT_TRUE(ok.complete) << ok.error;
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(echoHeaderValues(ok.body, "X-Forwarded-For"),
            std::vector<std::string>{"198.51.100.7, 127.0.0.1"});
  // A forged entry further left is not looked at.
  EXPECT_EQ(
      httpGet(g->port(), "/gateway/echo/x", {{"X-Forwarded-For", "198.51.100.66, 198.51.100.7"}})
          .status,
      200);
  EXPECT_EQ(httpGet(g->port(), "/gateway/echo/x", {{"X-Forwarded-For", "198.51.100.66"}}).status,
            403);
  EXPECT_EQ(httpGet(g->port(), "/gateway/echo/x", {{"X-Forwarded-For", "203.0.113.1"}}).status,
            403);
  // Without the load balancer's entry the request did not come through it: refused (the peer,
  // 127.0.0.1, is not used).
  EXPECT_EQ(httpGet(g->port(), "/gateway/echo/x").status, 403);
  EXPECT_EQ(httpGet(g->port(), "/gateway/echo/x", {{"X-Forwarded-For", "junk"}}).status, 403);
}

TEST_F(IpFilterTest, InvalidXffFallsBackToThePeerWhenConfigured) {
  auto g = start(
      "          allow: [127.0.0.0/8]\n          trusted_xff_depth: 2\n"
      "          on_invalid_xff: peer\n");
  ASSERT_TRUE(g->ready());
  EXPECT_EQ(httpGet(g->port(), "/gateway/echo/x").status, 200);  // too short: the peer
  EXPECT_EQ(
      httpGet(g->port(), "/gateway/echo/x", {{"X-Forwarded-For", "192.0.2.1, 127.0.0.9"}}).status,
      403);  // valid: the client is 192.0.2.1
}

TEST_F(IpFilterTest, BadCidrIsRefusedAtLoadWithItsLine) {
  TempConfig config("plugin_paths: " + pluginPathsYaml() +
                    "\nlisteners:\n  - name: edge\n    address: 127.0.0.1:1\n    filters:\n"
                    "      - name: ip_filter\n        config:\n          deny: [10.0.0.1/8]\n"
                    "clusters: []\n");
  Process p({runfile("core/sluice"), "-c", config.path(), "--validate", "--no-bind-check"}, {},
            "sluice-validate");
  EXPECT_NE(p.waitExit(15000), 0);
  EXPECT_NE(p.outputTail().find("sluice.yaml:8:18:"), std::string::npos) << p.outputTail();
  EXPECT_NE(p.outputTail().find("'10.0.0.1/8' has host bits set"), std::string::npos)
      << p.outputTail();
}

}  // namespace
}  // namespace sluice::test
