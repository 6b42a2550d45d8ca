// Drain on SIGTERM: in-flight requests finish, new connections are refused, exit code 0.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <thread>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr int kDrainTimeoutMs = 5000;

constexpr char kConfig[] = R"(
workers: 2
drain_timeout_ms: 5000
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: slow
    endpoints: [${BACKEND}]
)";

// Waits until a connection to `port` is refused; false if it is still accepted after `ms`.
bool refusedWithin(int port, int ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    RawConnection probe(port, 200);
    if (!probe.connected()) return true;
    probe.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Waits until sluice has received `n` requests (admin downstream_rq_total), so a signal sent
// next finds them in flight. False after 5 s.
bool waitForRequests(int admin_port, uint64_t n) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (adminStats(admin_port)["downstream_rq_total"] >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Waits until the admin endpoint reports draining (GET /ready answers 503). False after 5 s.
bool waitForDraining(int admin_port) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (httpGet(admin_port, "/ready").status == 503) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(DrainTest, InFlightRequestCompletesNewConnectionsRefusedExitZero) {
  EchoBackend backend("slow");
  Gateway gateway(kConfig, {{"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());

  RawConnection in_flight(gateway.port());
  ASSERT_TRUE(in_flight.send(buildRequest("GET", "/gateway/slow/delay/1500", {}, "", 1)));
  ASSERT_TRUE(waitForRequests(gateway.adminPort(), 1));
  auto signalled = std::chrono::steady_clock::now();
  ASSERT_TRUE(gateway.process().signal(SIGTERM));

  EXPECT_TRUE(refusedWithin(gateway.port(), 1000)) << "still accepting after SIGTERM";

  Response r = in_flight.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(echoString(r.body, "path"), "/slow/delay/1500");
  // The draining proxy closes the connection after the response.
  EXPECT_TRUE(in_flight.isClosed(2000));
  in_flight.close();

  EXPECT_EQ(gateway.process().waitExit(kDrainTimeoutMs + 2000), 0);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - signalled)
                  .count();
  EXPECT_LT(took, kDrainTimeoutMs) << "exited only at the drain timeout, not when drained";
}

TEST(DrainTest, IdleKeepAliveConnectionsAreClosedAndExitIsPrompt) {
  EchoBackend backend("slow");
  Gateway gateway(kConfig, {{"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());
  RawConnection idle(gateway.port());
  ASSERT_TRUE(idle.send(buildRequest("GET", "/gateway/slow/x", {}, "", 1)));
  Response r = idle.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  ASSERT_TRUE(r.keep_alive);

  ASSERT_TRUE(gateway.process().signal(SIGTERM));
  EXPECT_TRUE(idle.isClosed(2000)) << "idle keep-alive connection kept open while draining";
  EXPECT_EQ(gateway.process().waitExit(kDrainTimeoutMs + 2000), 0);
}

TEST(DrainTest, ReadinessTurnsUnavailableWhileDraining) {
  EchoBackend backend("slow");
  Gateway gateway(kConfig, {{"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());
  Response ready = httpGet(gateway.adminPort(), "/ready");
  ASSERT_TRUE(ready.complete) << ready.error;
  EXPECT_EQ(ready.status, 200);

  RawConnection in_flight(gateway.port());
  ASSERT_TRUE(in_flight.send(buildRequest("GET", "/gateway/slow/delay/1500", {}, "", 1)));
  ASSERT_TRUE(waitForRequests(gateway.adminPort(), 1));
  ASSERT_TRUE(gateway.process().signal(SIGTERM));
  EXPECT_TRUE(waitForDraining(gateway.adminPort())) << "/ready never turned 503";
  EXPECT_EQ(in_flight.readResponse().status, 200);
  in_flight.close();  // no lingering on our account
  EXPECT_EQ(gateway.process().waitExit(kDrainTimeoutMs + 2000), 0);
}

TEST(DrainTest, DrainTimeoutCutsARequestThatIsTooSlow) {
  EchoBackend backend("slow");
  Gateway gateway(kConfig, {{"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());
  RawConnection in_flight(gateway.port());
  ASSERT_TRUE(in_flight.send(buildRequest("GET", "/gateway/slow/delay/20000", {}, "", 1)));
  ASSERT_TRUE(waitForRequests(gateway.adminPort(), 1));
  ASSERT_TRUE(gateway.process().signal(SIGTERM));
  // Still exits (0) once drain_timeout_ms passes, without waiting for the 20 s request.
  EXPECT_EQ(gateway.process().waitExit(kDrainTimeoutMs + 3000), 0);
  Response r = in_flight.readResponse();
  EXPECT_NE(r.status, 200);
}

TEST(DrainTest, SigintDrainsLikeSigterm) {
  EchoBackend backend("slow");
  Gateway gateway(kConfig, {{"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());
  RawConnection in_flight(gateway.port());
  ASSERT_TRUE(in_flight.send(buildRequest("GET", "/gateway/slow/delay/1000", {}, "", 1)));
  ASSERT_TRUE(waitForRequests(gateway.adminPort(), 1));
  ASSERT_TRUE(gateway.process().signal(SIGINT));
  EXPECT_EQ(in_flight.readResponse().status, 200);
  in_flight.close();  // no lingering on our account
  EXPECT_EQ(gateway.process().waitExit(kDrainTimeoutMs + 2000), 0);
}

TEST(DrainTest, SecondSignalStopsAtOnce) {
  EchoBackend backend("slow");
  Gateway gateway(kConfig, {{"BACKEND", backend.address()}});
  ASSERT_TRUE(gateway.ready());
  RawConnection in_flight(gateway.port());
  ASSERT_TRUE(in_flight.send(buildRequest("GET", "/gateway/slow/delay/20000", {}, "", 1)));
  ASSERT_TRUE(waitForRequests(gateway.adminPort(), 1));
  ASSERT_TRUE(gateway.process().signal(SIGTERM));
  ASSERT_TRUE(waitForDraining(gateway.adminPort()));  // the first signal has been handled
  ASSERT_TRUE(gateway.process().signal(SIGTERM));
  // Well before drain_timeout_ms (5 s): the second signal does not wait.
  EXPECT_NE(gateway.process().waitExit(3000), -1) << "still running after a second SIGTERM";
  EXPECT_NE(in_flight.readResponse().status, 200);
}

}  // namespace
}  // namespace sluice::test
