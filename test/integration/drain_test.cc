// Drain on SIGTERM: in-flight requests finish, new connections are refused, exit code 0.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test/integration/gateway.h"
#include "test/integration/scripted_upstream.h"

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
  // The draining proxy says so and closes the connection after the response.
  EXPECT_EQ(r.header("Connection"), "close");
  EXPECT_FALSE(r.keep_alive);
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

// SIGTERM under load: many keep-alive clients keep a slow-ish upstream busy; a SIGTERM lands
// mid-way. Every request that reached the upstream gets its complete response at its client
// (none is cut or answered with an error), a request that got no answer never reached the
// upstream (it met an idle connection being closed, or a refused connect: a client retries
// those), no response is partial, and sluice exits 0 before drain_timeout_ms.
TEST(DrainTest, SigtermUnderLoadAnswersEveryAcceptedRequestAndExitsZero) {
  constexpr int kClients = 24;
  constexpr int kUpstreamMs = 40;
  constexpr int kLoadDrainTimeoutMs = 20000;
  // The upstream answers each request after kUpstreamMs with the last segment of its path
  // (the request's id) as the body.
  auto idOf = [](const std::string& head) {
    size_t sp = head.find(' ');
    size_t end = head.find(' ', sp + 1);
    std::string target = head.substr(sp + 1, end - sp - 1);
    return target.substr(target.rfind('/') + 1);
  };
  ScriptedUpstream upstream([&](const std::string& head, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kUpstreamMs));
    return ScriptedUpstream::Reply{okResponse(idOf(head))};
  });
  Gateway gateway(R"(
workers: 2
drain_timeout_ms: 20000
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: up
    retries: 0
    endpoints: [${UP}]
)",
                  {{"UP", upstream.address()}});
  ASSERT_TRUE(gateway.ready());
  const int port = gateway.port();

  struct Client {
    std::vector<std::string> answered;    // complete 200 with the right body
    std::vector<std::string> unanswered;  // connection closed before any response byte
    std::vector<std::string> problems;    // partial or wrong responses, unexpected errors
    int closing_responses = 0;            // responses that carried Connection: close
  };
  std::vector<Client> clients(kClients);
  std::atomic<bool> signalled{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      Client& me = clients[c];
      int n = 0;
      // Until a connect is refused after the signal (the listener closed), or a safety cap.
      for (int attempt = 0; attempt < 100000; ++attempt) {
        RawConnection conn(port, 15000);
        if (!conn.connected()) {
          if (!signalled) me.problems.push_back("connect refused before the signal");
          return;
        }
        while (true) {
          std::string id = "c" + std::to_string(c) + "r" + std::to_string(n++);
          if (!conn.send(buildRequest("GET", "/gateway/up/" + id, {}, "", port))) {
            me.unanswered.push_back(id);
            break;
          }
          Response r = conn.readResponse();
          if (!r.complete) {
            if (r.status != 0 || r.error == "timeout") {
              me.problems.push_back(id + ": incomplete response (status " +
                                    std::to_string(r.status) + "): " + r.error);
            }
            me.unanswered.push_back(id);
            break;
          }
          if (r.status != 200 || r.body != id) {
            me.problems.push_back(id + ": status " + std::to_string(r.status) + " body " + r.body);
            break;
          }
          me.answered.push_back(id);
          if (r.header("Connection") == "close") ++me.closing_responses;
          if (!r.keep_alive) break;  // the proxy closes this one: open another
        }
      }
    });
  }
  // Let the load build up, then signal while requests are in flight.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (upstream.requests().size() < 300 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(upstream.requests().size(), 300u) << "the load never built up";
  signalled = true;
  auto signal_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(gateway.process().signal(SIGTERM));
  const int code = gateway.process().waitExit(kLoadDrainTimeoutMs + 10000);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - signal_at)
                  .count();
  for (auto& t : threads) t.join();
  EXPECT_EQ(code, 0) << gateway.process().outputTail();
  EXPECT_LT(took, kLoadDrainTimeoutMs) << "exited at the drain timeout: a request was cut";

  std::set<std::string> answered;
  std::set<std::string> unanswered;
  int closing = 0;
  for (const Client& cl : clients) {
    for (const std::string& p : cl.problems) ADD_FAILURE() << p;
    answered.insert(cl.answered.begin(), cl.answered.end());
    unanswered.insert(cl.unanswered.begin(), cl.unanswered.end());
    closing += cl.closing_responses;
  }
  size_t reached = 0;
  for (const std::string& head : upstream.requests()) {
    std::string id = idOf(head);
    ++reached;
    EXPECT_EQ(answered.count(id), 1u)
        << id << " reached the upstream but its client got no response";
    EXPECT_EQ(unanswered.count(id), 0u) << id;
  }
  EXPECT_EQ(reached, answered.size()) << "a response without a request at the upstream";
  // Not vacuous: requests were in flight when the drain began, and their responses said close.
  EXPECT_GT(closing, 0) << "no response carried Connection: close: nothing was in flight";
  std::printf(
      "drain under load: %zu requests answered, %d with Connection: close, %zu met a "
      "closing idle connection or a refused connect, exit after %lld ms\n",
      answered.size(), closing, unanswered.size(), static_cast<long long>(took));
}

}  // namespace
}  // namespace sluice::test
