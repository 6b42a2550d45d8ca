// Many clients at once through a multi-worker sluice: every request answered correctly (its own
// path and body come back), nothing lost, and the admin counters add up.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "test/integration/gateway.h"
#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters: [request_id]
clusters:
  - name: pool
    max_idle_connections: 4
    endpoints: [${B0}, ${B1}, ${B2}]
)";

TEST(ConcurrencyTest, ManyClientsMixedKeepAliveAndNewConnections) {
  constexpr int kClients = 24;
  constexpr int kRequestsPerClient = 60;
  EchoBackend b0("b0", 2), b1("b1", 2), b2("b2", 2);
  Gateway gateway(kConfig, {{"B0", b0.address()}, {"B1", b1.address()}, {"B2", b2.address()}});
  ASSERT_TRUE(gateway.ready());
  int64_t rq_before = adminStats(gateway.adminPort())["downstream_rq_total"];

  std::atomic<int> ok{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::unique_ptr<RawConnection> conn;
      for (int i = 0; i < kRequestsPerClient; ++i) {
        // Odd clients open a new connection every 7 requests; even ones keep one.
        if (conn == nullptr || (c % 2 == 1 && i % 7 == 0)) {
          conn = std::make_unique<RawConnection>(gateway.port());
        }
        std::string path = "/gateway/pool/c" + std::to_string(c) + "/r" + std::to_string(i);
        std::string body = i % 3 == 0 ? std::string(1000 + c * 10 + i, 'q') : "";
        std::string method = body.empty() ? "GET" : "POST";
        if (!conn->send(buildRequest(method, path, {}, body, 1))) {
          ++bad;
          conn.reset();
          continue;
        }
        Response r = conn->readResponse();
        bool good = r.complete && r.status == 200 && echoString(r.body, "path") == path.substr(8) &&
                    echoNumber(r.body, "body_length") == static_cast<int64_t>(body.size()) &&
                    echoString(r.body, "body_fnv1a") == hex8(fnv1a(body)) &&
                    echoHeaderValues(r.body, "X-Request-Id").size() == 1;
        if (good) {
          ++ok;
        } else {
          ++bad;
          conn.reset();
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ok.load(), kClients * kRequestsPerClient);
  std::map<std::string, uint64_t> stats = adminStats(gateway.adminPort());
  EXPECT_EQ(static_cast<int64_t>(stats["downstream_rq_total"]) - rq_before,
            kClients * kRequestsPerClient);
  EXPECT_EQ(stats["downstream_rq_5xx"], 0u);
  EXPECT_EQ(stats["workers"], 2u);
}

TEST(ConcurrencyTest, RequestsInFlightTogetherAreForwardedTogether) {
  // The upstream answers nobody until it holds all kRequests requests at once: this passes only
  // if sluice forwards concurrent requests over concurrent upstream connections.
  constexpr int kRequests = 20;
  struct Barrier {
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0;
  };
  auto barrier = std::make_shared<Barrier>();
  ScriptedGateway s([barrier](const std::string&, int) {
    std::unique_lock<std::mutex> lock(barrier->mu);
    ++barrier->arrived;
    barrier->cv.notify_all();
    bool all = barrier->cv.wait_for(lock, std::chrono::seconds(8),
                                    [&] { return barrier->arrived >= kRequests; });
    return ScriptedUpstream::Reply{okResponse(all ? "together" : "alone")};
  });
  ASSERT_TRUE(s.gateway.ready());
  std::vector<std::unique_ptr<RawConnection>> conns;
  for (int i = 0; i < kRequests; ++i) {
    conns.push_back(std::make_unique<RawConnection>(s.gateway.port()));
    ASSERT_TRUE(conns.back()->send(s.get("/gateway/up/" + std::to_string(i))));
  }
  for (auto& c : conns) {
    Response r = c->readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.body, "together");
  }
}

}  // namespace
}  // namespace sluice::test
