// Downstream timeouts of the real binary: slow headers get 408, idle keep-alive connections
// are closed, and neither cuts a request that is waiting on its upstream.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "test/integration/echo_fixture.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
plugin_paths: ${PLUGINS}
limits:
  request_header_timeout_ms: 300
  idle_timeout_ms: 1500
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

class TimeoutsTest : public EchoFixture {
 protected:
  static void SetUpTestSuite() { startWith(kConfig); }
};

TEST_F(TimeoutsTest, SlowHeadersGet408AndAClose) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/x HTTP/1.1\r\nHost: a\r\nX-Slow: "));
  Response r = conn.readResponse();  // no more bytes: the header timeout must fire
  EXPECT_TRUE(isJsonError(r, 408));
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(TimeoutsTest, TricklingHeadersStillGet408) {
  // A byte every 100 ms keeps the connection busy but never finishes the headers (slowloris).
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/x HTTP/1.1\r\nHost: a\r\n"));
  bool refused = false;
  for (int i = 0; i < 20 && !refused; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    refused = !conn.send("X");
  }
  Response r = conn.readResponse();
  EXPECT_TRUE(isJsonError(r, 408));
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(TimeoutsTest, AClientTricklingAfterIts408CannotHoldTheConnection) {
  // After the 408 sluice half-closes and reads for a moment (a lingering close, so the 408 is
  // not destroyed by an RST); a client that keeps sending a byte a second must not keep the
  // socket open with it: the lingering ends 5 s after it began whatever arrives.
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/x HTTP/1.1\r\nHost: a\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(isJsonError(r, 408));
  const auto start = std::chrono::steady_clock::now();
  bool refused = false;
  while (!refused && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    refused = !conn.send("X");
  }
  EXPECT_TRUE(refused) << "sluice still reads a trickling client 20 s after its 408";
}

TEST_F(TimeoutsTest, SlowHeadersOfASecondRequestGet408) {
  // On a kept-alive connection the header timeout (not the longer idle timeout) applies as
  // soon as the next request has started.
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/first", {}, "", 1)));
  Response first = conn.readResponse();
  ASSERT_TRUE(first.complete) << first.error;
  ASSERT_TRUE(conn.send("GET /gateway/echo/second HTTP/1.1\r\nHost: a\r\n"));
  Response r = conn.readResponse();
  EXPECT_TRUE(isJsonError(r, 408));
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(TimeoutsTest, IdleKeepAliveConnectionIsClosed) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/x", {}, "", 1)));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_TRUE(r.keep_alive);
  EXPECT_TRUE(conn.isClosed(5000)) << "idle connection kept past idle_timeout_ms";
}

TEST_F(TimeoutsTest, SilentNewConnectionIsClosed) {
  RawConnection conn(port());
  EXPECT_TRUE(conn.isClosed(5000));
}

TEST_F(TimeoutsTest, SlowUpstreamIsNotCutByDownstreamTimeouts) {
  // The backend takes longer than both downstream timeouts; the request is not idle.
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/delay/2500", {}, "", 1)));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  // And the connection is still usable afterwards.
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/after", {}, "", 1)));
  Response after = conn.readResponse();
  ASSERT_TRUE(after.complete) << after.error;
  EXPECT_EQ(after.status, 200);
}

TEST_F(TimeoutsTest, StalledRequestBodyClosesTheConnection) {
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send(buildRequest("POST", "/gateway/echo/upload", {{"Content-Length", "100"}}, "", 1) +
                "only part of it"));
  EXPECT_TRUE(conn.isClosed(5000)) << "stalled body kept open past idle_timeout_ms";
}

}  // namespace
}  // namespace sluice::test
