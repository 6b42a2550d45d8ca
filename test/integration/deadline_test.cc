// Time limits and circuit breakers of the real binary: the whole-request timeout (504), the
// deadline header sent upstream, shortened by a trusted incoming one, and an expired deadline
// answered 504 without going upstream; a stalled request body gets 408; an oversized upstream
// header section is a 502 whose connection is closed; max_requests gives fast 503s; a client
// that goes away closes the upstream connection.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "test/integration/access_log_util.h"
#include "test/integration/gateway.h"
#include "test/integration/resilience_util.h"
#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

using Reply = ScriptedUpstream::Reply;

constexpr char kConfig[] = R"(
workers: 1
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
limits:
  idle_timeout_ms: 600
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    trusted_deadline_header: X-Request-Deadline-Ms
    access_log: {path: ${LOG}}
  - name: untrusted
    address: 127.0.0.1:${PORT2}
    context_path: /gateway
routes:
  - prefix: /short/
    cluster: echo
    timeout_ms: 300
clusters:
  - name: echo
    endpoints: [${ECHO}]
    request_timeout_ms: 5000
    deadline_header: X-Request-Deadline-Ms
  - name: counted
    endpoints: [${COUNTED}]
    deadline_header: X-Request-Deadline-Ms
  - name: big
    endpoints: [${BIG}]
    max_response_header_bytes: 1024
  - name: narrow
    endpoints: [${ECHO}]
    circuit_breakers: {max_requests: 1}
  - name: stall
    endpoints: [${BIG}]
    response_timeout_ms: 400
  - name: narrowcx
    endpoints: [${ECHO}]
    circuit_breakers: {max_connections: 1}
)";

class DeadlineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    echo_ = std::make_unique<EchoBackend>("echo");
    counted_ = std::make_unique<ScriptedUpstream>(
        [](const std::string&, int) { return Reply{okResponse("counted")}; });
    big_ = std::make_unique<ScriptedUpstream>([](const std::string& head, int) {
      if (head.find("/small") != std::string::npos) return Reply{okResponse("small")};
      if (head.find("/stall") != std::string::npos) {
        // 10 of 100 body bytes, then nothing for 2.5 s.
        return Reply{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789", true,
                     std::string(90, 'x'), 2500};
      }
      return Reply{okResponse("big", "X-Big: " + std::string(2000, 'b') + "\r\n")};
    });
    port2_ = freePort();
    log_ = uniqueTmpPath("deadline_access.json");
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"ECHO", echo_->address()},
                                                    {"COUNTED", counted_->address()},
                                                    {"BIG", big_->address()},
                                                    {"PORT2", std::to_string(port2_)},
                                                    {"LOG", log_}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    big_.reset();
    counted_.reset();
    echo_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }
  static int port() { return gateway_->port(); }

  static inline std::unique_ptr<EchoBackend> echo_;
  static inline std::unique_ptr<ScriptedUpstream> counted_;
  static inline std::unique_ptr<ScriptedUpstream> big_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline int port2_ = 0;
  static inline std::string log_;
};

int64_t deadlineSeen(const Response& r) {
  std::vector<std::string> v = echoHeaderValues(r.body, "X-Request-Deadline-Ms");
  return v.size() == 1 ? std::stoll(v[0]) : -1;
}

TEST_F(DeadlineTest, RemainingBudgetGoesUpstream) {
  Response r = httpGet(port(), "/gateway/echo/x");
  ASSERT_EQ(r.status, 200);
  int64_t ms = deadlineSeen(r);
  EXPECT_LE(ms, 5000);
  EXPECT_GT(ms, 3000);
}

TEST_F(DeadlineTest, TrustedIncomingDeadlineShortensTheBudget) {
  Response r = httpGet(port(), "/gateway/echo/x", {{"X-Request-Deadline-Ms", "1500"}});
  ASSERT_EQ(r.status, 200);
  int64_t ms = deadlineSeen(r);
  EXPECT_LE(ms, 1500);
  EXPECT_GT(ms, 0);
  // A longer incoming value never lengthens the cluster's 5 s.
  r = httpGet(port(), "/gateway/echo/x", {{"X-Request-Deadline-Ms", "90000"}});
  EXPECT_LE(deadlineSeen(r), 5000);
}

TEST_F(DeadlineTest, TheTightestOfSeveralIncomingDeadlinesWins) {
  // Two fields (two hops, or a repeated header) and a list: the smallest valid value counts;
  // values that are not whole milliseconds are ignored.
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send("GET /gateway/echo/x HTTP/1.1\r\nHost: a\r\nX-Request-Deadline-Ms: 4000\r\n"
                "X-Request-Deadline-Ms: 900, -5, abc, 1.5\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_EQ(r.status, 200);
  int64_t ms = deadlineSeen(r);
  EXPECT_LE(ms, 900);
  EXPECT_GT(ms, 0);
}

TEST_F(DeadlineTest, UntrustedListenerIgnoresTheIncomingDeadline) {
  Response r = httpGet(port2_, "/gateway/echo/x", {{"X-Request-Deadline-Ms", "5"}});
  ASSERT_EQ(r.status, 200);  // not shortened to 5 ms
  EXPECT_GT(deadlineSeen(r), 3000);
}

TEST_F(DeadlineTest, ExpiredDeadlineIs504WithoutGoingUpstream) {
  size_t before = counted_->requests().size();
  Response r = httpGet(port(), "/gateway/counted/x", {{"X-Request-Deadline-Ms", "0"}});
  EXPECT_TRUE(isJsonError(r, 504));
  EXPECT_EQ(counted_->requests().size(), before);
  // Without a budget (no request_timeout_ms, no incoming header) nothing is sent as a deadline.
  r = httpGet(port(), "/gateway/counted/x");
  EXPECT_EQ(r.status, 200);
  ASSERT_EQ(counted_->requests().size(), before + 1);
  EXPECT_EQ(counted_->requests().back().find("X-Request-Deadline-Ms"), std::string::npos);
}

TEST_F(DeadlineTest, WholeRequestTimeoutIs504) {
  int64_t t0 = nowMs();
  Response r = httpGet(port(), "/gateway/short/delay/3000");  // route timeout_ms: 300
  EXPECT_TRUE(isJsonError(r, 504));
  EXPECT_LT(nowMs() - t0, 2500);
  EXPECT_GE(metric(gateway_->adminPort(),
                   R"(sluice_upstream_timeouts_by_kind_total{cluster="echo",kind="request"})"),
            1);
}

TEST_F(DeadlineTest, StalledRequestBodyGets408AndAClose) {
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send("POST /gateway/echo/upload HTTP/1.1\r\nHost: a\r\nContent-Length: 100"
                "\r\n\r\n0123456789"));
  Response r = conn.readResponse();  // 90 bytes never come: idle_timeout_ms 600
  EXPECT_TRUE(isJsonError(r, 408)) << r.status << " " << r.error;
  EXPECT_TRUE(conn.isClosed(3000));
  EXPECT_GE(metric(gateway_->adminPort(),
                   R"(sluice_downstream_timeouts_total{listener="edge",kind="body"})"),
            1);
}

TEST_F(DeadlineTest, BodyStalledPastTheRequestTimeoutIs408NotAnUpstreamTimeout) {
  // The route's timeout_ms (300) passes while the client still owes 90 body bytes (and before
  // idle_timeout_ms, 600): the client stalled, not the upstream.
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send("POST /gateway/short/upload HTTP/1.1\r\nHost: a\r\nContent-Length: 100"
                "\r\n\r\n0123456789"));
  Response r = conn.readResponse();
  EXPECT_TRUE(isJsonError(r, 408)) << r.status << " " << r.body;
  EXPECT_TRUE(conn.isClosed(3000));
}

TEST_F(DeadlineTest, OversizedUpstreamHeaderIs502AndItsConnectionClosed) {
  Response ok = httpGet(port(), "/gateway/big/small");
  ASSERT_EQ(ok.status, 200);
  int conns = big_->connections();
  Response r = httpGet(port(), "/gateway/big/large");
  EXPECT_TRUE(isJsonError(r, 502));
  // The pooled connection was not reused after the refused response: a new one follows.
  EXPECT_EQ(httpGet(port(), "/gateway/big/small").status, 200);
  EXPECT_EQ(big_->connections(), conns + 1);
  EXPECT_GE(metric(gateway_->adminPort(),
                   R"(sluice_upstream_response_headers_too_large_total{cluster="big"})"),
            1);
}

TEST_F(DeadlineTest, MaxRequestsBreakerAnswersFast503) {
  std::thread slow([] { httpGet(gateway_->port(), "/gateway/narrow/delay/1500"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the slow one is in flight
  int64_t t0 = nowMs();
  Response r = httpGet(port(), "/gateway/narrow/x");
  int64_t took = nowMs() - t0;
  slow.join();
  EXPECT_TRUE(isJsonError(r, 503));
  EXPECT_LT(took, 1000);
  EXPECT_GE(metric(gateway_->adminPort(), R"(sluice_upstream_circuit_breaker_overflow_total{)"
                                          R"(cluster="narrow",breaker="max_requests"})"),
            1);
  EXPECT_EQ(httpGet(port(), "/gateway/narrow/x").status, 200);  // closes again
}

TEST_F(DeadlineTest, ResponseBodyThatStallsIsCut) {
  int64_t t0 = nowMs();
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/stall/stall", {}, "", 1)));
  Response r = conn.readResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);  // cut after response_timeout_ms without a byte, not completed
  EXPECT_LT(nowMs() - t0, 2400);
  EXPECT_GE(
      metric(gateway_->adminPort(),
             R"(sluice_upstream_timeouts_by_kind_total{cluster="stall",kind="response_body"})"),
      1);
}

TEST_F(DeadlineTest, AccessLogFlagsNameTheTimeoutAndTheBreaker) {
  EXPECT_TRUE(isJsonError(httpGet(port(), "/gateway/short/delay/2001"), 504));
  std::thread slow([] { httpGet(gateway_->port(), "/gateway/narrow/delay/1200"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(isJsonError(httpGet(port(), "/gateway/narrow/flags"), 503));
  slow.join();
  auto timeout = waitForRequests(log_, "/gateway/short/delay/2001");
  ASSERT_EQ(timeout.size(), 1u);
  auto flags = flagsOf(timeout[0]);
  EXPECT_NE(std::find(flags.begin(), flags.end(), "request_timeout"), flags.end());
  auto overflow = waitForRequests(log_, "/gateway/narrow/flags");
  ASSERT_EQ(overflow.size(), 1u);
  flags = flagsOf(overflow[0]);
  EXPECT_NE(std::find(flags.begin(), flags.end(), "upstream_overflow"), flags.end());
}

TEST_F(DeadlineTest, MaxConnectionsBreakerAnswersFast503) {
  std::thread slow([] { httpGet(gateway_->port(), "/gateway/narrowcx/delay/1500"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // holds the one connection
  Response r = httpGet(port(), "/gateway/narrowcx/x");
  slow.join();
  EXPECT_TRUE(isJsonError(r, 503));
  EXPECT_GE(metric(gateway_->adminPort(), R"(sluice_upstream_circuit_breaker_overflow_total{)"
                                          R"(cluster="narrowcx",breaker="max_connections"})"),
            1);
  EXPECT_EQ(httpGet(port(), "/gateway/narrowcx/x").status, 200);  // the pooled one is reused
}

TEST_F(DeadlineTest, ClientThatStopsReadingItsResponseIsCut) {
  const std::string idle = R"(sluice_downstream_timeouts_total{listener="edge",kind="idle"})";
  double before = metric(gateway_->adminPort(), idle);
  RawConnection conn(port());
  int small = 4096;
  setsockopt(conn.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/bytes/200000000", {}, "", 1)));
  double after = before;
  for (int i = 0; i < 100 && after <= before; ++i) {  // idle_timeout_ms 600, twice at most
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after = metric(gateway_->adminPort(), idle);
  }
  EXPECT_GT(after, before) << "a client reading nothing is held forever";
}

// A TCP server that accepts one connection, reads a request head, then reports how long the
// peer took to close it (nothing is ever answered).
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(fd_, 8);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      got_request_ = true;
      char buf[4096];
      pollfd p{c, POLLIN, 0};
      for (int waited = 0; waited < 10000; waited += 50) {
        if (::poll(&p, 1, 50) > 0 && ::recv(c, buf, sizeof(buf), 0) <= 0) {
          closed_ = true;
          break;
        }
      }
      ::close(c);
    });
  }
  ~SilentServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::atomic<bool> got_request_{false};
  std::atomic<bool> closed_{false};

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(ClientAbortTest, ClientGoingAwayClosesTheUpstreamConnection) {
  SilentServer backend;
  Gateway gw(R"(
workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: up
    endpoints: [${UP}]
    response_timeout_ms: 60000
)",
             {{"UP", backend.address()}});
  ASSERT_TRUE(gw.ready());
  {
    RawConnection conn(gw.port());
    ASSERT_TRUE(conn.send("GET /gateway/up/slow HTTP/1.1\r\nHost: a\r\n\r\n"));
    for (int i = 0; i < 100 && !backend.got_request_; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(backend.got_request_);
    // Abortive close (RST), as a client killed or timing out does; a plain FIN after a
    // complete request is a half-close and still gets its response (docs/configuration.md).
    linger l{1, 0};
    setsockopt(conn.fd(), SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  }
  for (int i = 0; i < 100 && !backend.closed_; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(backend.closed_) << "the backend still holds the abandoned request";
}

}  // namespace
}  // namespace sluice::test
