// Idle keep-alive connections give up their buffers (DownstreamConnection parking, after
// IdleParker::kParkAfterMs idle, or at once beyond IdleParker::kMaxUnparked idle connections)
// and must behave exactly as before: the next request, pipelined requests, the idle timeout, a
// client's close, a drain and SIGUSR2 (a trim) all work on a parked connection, which stays
// counted as open and keeps its client address.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "test/integration/echo_fixture.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
limits:
  idle_timeout_ms: 6000
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

// Longer than IdleParker::kParkAfterMs plus one tick: the connection is parked by then.
constexpr auto kParked = std::chrono::milliseconds(2600);

class IdleParkTest : public EchoFixture {
 protected:
  static void SetUpTestSuite() { startWith(kConfig); }
  // expectEchoOf, and the connection is kept.
  static void expectEcho(RawConnection& conn, const std::string& path) {
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << path << ": " << r.error;
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.keep_alive);
    EXPECT_EQ(echoString(r.body, "path"), path.substr(8)) << "responses out of order";
  }
  static int64_t activeConnections() {
    auto stats = adminStats(gateway_->adminPort());
    auto it = stats.find("downstream_cx_active");
    return it == stats.end() ? -1 : static_cast<int64_t>(it->second);
  }
  // Polls (generously: a loaded machine) until downstream_cx_active is `n`.
  static bool activeBecomes(int64_t n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (activeConnections() != n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
};

TEST_F(IdleParkTest, ParkedConnectionServesTheNextRequests) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/first")));
  expectEcho(conn, "/gateway/echo/first");
  std::this_thread::sleep_for(kParked);
  for (int i = 0; i < 3; ++i) {
    std::string path = "/gateway/echo/after/" + std::to_string(i);
    ASSERT_TRUE(conn.send(get(path)));
    expectEcho(conn, path);
  }
  // Parked a second time, then used again.
  std::this_thread::sleep_for(kParked);
  ASSERT_TRUE(conn.send(get("/gateway/echo/again")));
  expectEcho(conn, "/gateway/echo/again");
}

TEST_F(IdleParkTest, ParkedConnectionKeepsItsClientAddressAndCount) {
  // A parked connection is rebuilt from its socket: the address sent upstream is read back
  // from it, and it stays counted as open (once) while parked.
  ASSERT_TRUE(activeBecomes(0));
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/a")));
  Response first = conn.readResponse();
  ASSERT_TRUE(first.complete) << first.error;
  std::this_thread::sleep_for(kParked);
  EXPECT_EQ(activeConnections(), 1) << "parked: still open, counted once";
  ASSERT_TRUE(conn.send(get("/gateway/echo/b")));
  Response second = conn.readResponse();
  ASSERT_TRUE(second.complete) << second.error;
  EXPECT_EQ(echoHeaderValues(second.body, "x-forwarded-for"),
            echoHeaderValues(first.body, "x-forwarded-for"));
  EXPECT_EQ(echoHeaderValues(second.body, "x-forwarded-for"),
            std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(activeConnections(), 1);
}

TEST_F(IdleParkTest, ParkedConnectionWithoutAnyRequestYetServes) {
  RawConnection conn(port());
  std::this_thread::sleep_for(kParked);
  ASSERT_TRUE(conn.send(get("/gateway/echo/late")));
  expectEcho(conn, "/gateway/echo/late");
}

TEST_F(IdleParkTest, PipelinedRequestsOnAParkedConnectionAreAnsweredInOrder) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/one")));
  expectEcho(conn, "/gateway/echo/one");
  std::this_thread::sleep_for(kParked);
  ASSERT_TRUE(conn.send(get("/gateway/echo/delay/200") + get("/gateway/echo/p2") +
                        get("/gateway/echo/p3")));
  expectEcho(conn, "/gateway/echo/delay/200");
  expectEcho(conn, "/gateway/echo/p2");
  expectEcho(conn, "/gateway/echo/p3");
}

TEST_F(IdleParkTest, RequestSplitAcrossParkingIsReadWhole) {
  // The first bytes of a request unpark the connection; the rest arrives later.
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/one")));
  expectEcho(conn, "/gateway/echo/one");
  std::this_thread::sleep_for(kParked);
  std::string req = get("/gateway/echo/split");
  ASSERT_TRUE(conn.send(req.substr(0, 10)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(conn.send(req.substr(10)));
  expectEcho(conn, "/gateway/echo/split");
}

TEST_F(IdleParkTest, ParkedConnectionIsClosedAtTheIdleTimeout) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/x")));
  expectEcho(conn, "/gateway/echo/x");
  std::this_thread::sleep_for(kParked);
  EXPECT_FALSE(conn.isClosed(100)) << "parked, not closed";
  EXPECT_TRUE(conn.isClosed(15000)) << "parked connection kept past idle_timeout_ms";
  EXPECT_TRUE(activeBecomes(0));
}

TEST_F(IdleParkTest, ClientClosingAParkedConnectionLeavesTheProxyServing) {
  ASSERT_TRUE(activeBecomes(0));
  {
    RawConnection conn(port());
    ASSERT_TRUE(conn.send(get("/gateway/echo/x")));
    expectEcho(conn, "/gateway/echo/x");
    std::this_thread::sleep_for(kParked);
    EXPECT_EQ(activeConnections(), 1);
  }  // closed by the client while parked
  EXPECT_TRUE(activeBecomes(0)) << "the client's close of a parked connection went unnoticed";
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/y")));
  expectEcho(conn, "/gateway/echo/y");
}

TEST_F(IdleParkTest, ManyIdleConnectionsAreParkedAtOnceAndAllStillServe) {
  // More idle connections than IdleParker::kMaxUnparked: the oldest are parked without waiting.
  constexpr int kConns = 400;
  std::vector<std::unique_ptr<RawConnection>> conns;
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(std::make_unique<RawConnection>(port()));
    ASSERT_TRUE(conns.back()->send(get("/gateway/echo/open/" + std::to_string(i)))) << i;
    expectEcho(*conns.back(), "/gateway/echo/open/" + std::to_string(i));
  }
  for (int i = 0; i < kConns; ++i) {
    std::string path = "/gateway/echo/reuse/" + std::to_string(i);
    ASSERT_TRUE(conns[i]->send(get(path))) << i;
    expectEcho(*conns[i], path);
  }
}

TEST_F(IdleParkTest, Sigusr2TrimsAndParkedConnectionsStillServe) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/before")));
  expectEcho(conn, "/gateway/echo/before");
  std::this_thread::sleep_for(kParked);
  ASSERT_TRUE(gateway_->process().signal(SIGUSR2));
  EXPECT_TRUE(gateway_->process().waitForOutput("SIGUSR2: giving free heap memory back"))
      << gateway_->process().outputTail();
  ASSERT_TRUE(conn.send(get("/gateway/echo/after")));
  expectEcho(conn, "/gateway/echo/after");
  EXPECT_TRUE(activeBecomes(1)) << "SIGUSR2 must not end the process or a connection";
}

TEST(IdleParkDrainTest, DrainClosesParkedConnectionsAndExits) {
  EchoBackend backend("echo");
  Gateway gw(kConfig, {{"BACKEND", backend.address()}});
  ASSERT_TRUE(gw.ready());
  RawConnection conn(gw.port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/echo/x", {}, "", gw.port())));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  std::this_thread::sleep_for(kParked);
  gw.process().signal(SIGTERM);
  EXPECT_TRUE(conn.isClosed(10000)) << "parked connection not closed by the drain";
  EXPECT_EQ(gw.process().waitExit(15000), 0);
}

}  // namespace
}  // namespace sluice::test
