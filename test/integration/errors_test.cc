// Upstream failures through the real binary: refused connections (502/503), response timeout
// (504), upstream error statuses passed through, and a retry on another host after a refusal.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: live
    response_timeout_ms: 500
    endpoints: [${LIVE}]
  - name: dead
    retries: 0
    endpoints: [${DEAD1}]
  - name: alldead
    retries: 1
    endpoints: [${DEAD1}, ${DEAD2}]
  - name: mixed
    retries: 1
    balancer: { name: round_robin }
    endpoints: [${DEAD1}, ${LIVE}]
  - name: empty
    endpoints: []
  - name: twodead
    retries: 2
    endpoints: [${DEAD1}, ${DEAD2}, ${LIVE}]
  - name: blackhole
    retries: 0
    connect_timeout_ms: 300
    endpoints: [${BLACKHOLE}]
)";

// A listening socket whose accept queue is full and never drained: further connection attempts
// get no answer at all (SYNs dropped), so connecting to it times out.
class BlackholePort {
 public:
  BlackholePort() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), len);
    listen(fd_, 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    // Fill the queue (a backlog of 0 still admits one; take a few to be sure).
    for (int i = 0; i < 3; ++i) {
      int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      connect(c, reinterpret_cast<sockaddr*>(&addr), len);
      fillers_.push_back(c);
    }
  }
  ~BlackholePort() {
    for (int c : fillers_) close(c);
    close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> fillers_;
};

class ErrorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    live_ = std::make_unique<EchoBackend>("live");
    dead1_ = std::make_unique<DeadPort>();
    dead2_ = std::make_unique<DeadPort>();
    blackhole_ = std::make_unique<BlackholePort>();
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"LIVE", live_->address()},
                                                    {"DEAD1", dead1_->address()},
                                                    {"DEAD2", dead2_->address()},
                                                    {"BLACKHOLE", blackhole_->address()}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    live_.reset();
    dead1_.reset();
    dead2_.reset();
    blackhole_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static Response get(const std::string& path) { return httpGet(gateway_->port(), path); }

  static inline std::unique_ptr<EchoBackend> live_;
  static inline std::unique_ptr<DeadPort> dead1_;
  static inline std::unique_ptr<DeadPort> dead2_;
  static inline std::unique_ptr<BlackholePort> blackhole_;
  static inline std::unique_ptr<Gateway> gateway_;
};

TEST_F(ErrorsTest, BackendDownIs502Json) {
  Exchange e = exchange(gateway_->port(), buildRequest("GET", "/gateway/dead/x", {}, "", 1));
  EXPECT_TRUE(isJsonError(e.response, 502));
  EXPECT_EQ(e.response.header("X-Backend"), "");
  EXPECT_TRUE(e.closed) << "connection left open after a 502";
}

TEST_F(ErrorsTest, AllEndpointsDownIs502Or503) {
  for (int i = 0; i < 4; ++i) {
    Response r = get("/gateway/alldead/x");
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_TRUE(r.status == 502 || r.status == 503) << r.status;
    EXPECT_TRUE(isJsonError(r, r.status));
  }
}

TEST_F(ErrorsTest, ClusterWithoutEndpointsIs503Json) {
  EXPECT_TRUE(isJsonError(get("/gateway/empty/x"), 503));
}

TEST_F(ErrorsTest, SlowBackendIs504AfterResponseTimeout) {
  Exchange e =
      exchange(gateway_->port(), buildRequest("GET", "/gateway/live/delay/3000", {}, "", 1), 1000);
  EXPECT_TRUE(isJsonError(e.response, 504));
  EXPECT_TRUE(e.closed);
  // The cluster still works afterwards (the timed-out upstream connection was not pooled).
  Response after = get("/gateway/live/after");
  ASSERT_TRUE(after.complete) << after.error;
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(echoString(after.body, "path"), "/live/after");
}

TEST_F(ErrorsTest, UpstreamErrorStatusIsPassedThroughUnchanged) {
  for (int status : {503, 500, 404, 418}) {
    Response r = get("/gateway/live/status/" + std::to_string(status));
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, status);
    // The backend's own body and headers, not a gateway error.
    EXPECT_EQ(r.header("X-Backend"), "live");
    EXPECT_EQ(echoString(r.body, "backend"), "live") << r.body;
  }
}

TEST_F(ErrorsTest, UpstreamErrorStatusKeepsTheConnection) {
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/live/status/503", {}, "", 1)));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 503);
  EXPECT_TRUE(r.keep_alive);
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/live/ok", {}, "", 1)));
  Response ok = conn.readResponse();
  ASSERT_TRUE(ok.complete) << ok.error;
  EXPECT_EQ(ok.status, 200);
}

TEST_F(ErrorsTest, RefusedConnectionIsRetriedOnAnotherHost) {
  int64_t retries_before = adminStats(gateway_->adminPort())["upstream_rq_retry"];
  for (int i = 0; i < 20; ++i) {
    Response r = get("/gateway/mixed/r/" + std::to_string(i));
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    EXPECT_EQ(r.status, 200) << i << ": " << r.body;
    EXPECT_EQ(r.header("X-Backend"), "live");
  }
  // Round robin sends every other first attempt to the dead host.
  EXPECT_GE(adminStats(gateway_->adminPort())["upstream_rq_retry"] - retries_before, 10);
}

TEST_F(ErrorsTest, UpstreamDroppingTheConnectionIs502) {
  Response r = get("/gateway/live/drop");
  EXPECT_TRUE(isJsonError(r, 502));
}

TEST_F(ErrorsTest, EnoughRetriesAlwaysFindTheLiveHost) {
  // Two dead endpoints and one live one; retries: 2 covers the worst case.
  for (int i = 0; i < 15; ++i) {
    Response r = get("/gateway/twodead/r/" + std::to_string(i));
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    EXPECT_EQ(r.status, 200) << i << ": " << r.body;
  }
}

TEST_F(ErrorsTest, ConnectTimeoutIs504Json) {
  Response r = get("/gateway/blackhole/x");
  EXPECT_TRUE(isJsonError(r, 504));
  EXPECT_NE(r.body.find("connect"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace sluice::test
