// A backend stopped with SIGSTOP (its kernel still accepts connections, nothing answers) in a
// 3-host cluster under load: its requests time out per try (response_timeout_ms) and are
// retried on the other hosts (retry_on: per_try_timeout), so no client sees a failure.
// Ejecting the stopped host is outlier detection's job (tested with it); here every third
// first try still goes to it.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test/integration/gateway.h"
#include "test/integration/resilience_util.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
plugin_paths: ${PLUGINS}
admin: {address: 127.0.0.1:${ADMIN}}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: echo
    endpoints: [${A}, ${B}, ${C}]
    connect_timeout_ms: 500
    response_timeout_ms: 400
    retry_policy:
      retries: 2
      retry_on: [connect_failure, reset, per_try_timeout]
      min_retry_concurrency: 16
)";

TEST(SigstopTest, StoppedBackendsRequestsAreRetriedElsewhere) {
  EchoBackend a("a");
  EchoBackend b("b");
  EchoBackend c("c");
  Gateway gw(kConfig, {{"A", a.address()}, {"B", b.address()}, {"C", c.address()}});
  ASSERT_TRUE(gw.ready());
  constexpr int kClients = 8;
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&] {
      RawConnection conn(gw.port(), 10000);
      while (!stop) {
        Response r;
        if (conn.send(buildRequest("GET", "/gateway/echo/x", {}, "", gw.port()))) {
          r = conn.readResponse();
        }
        if (r.status == 200 && r.complete) {
          ++ok;
        } else {
          ++failed;
          return;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_TRUE(b.process().signal(SIGSTOP));
  const int ok_at_stop = ok.load();
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const int ok_stopped = ok.load() - ok_at_stop;
  b.process().signal(SIGCONT);
  stop = true;
  for (auto& t : clients) t.join();
  const double per_try = metric(
      gw.adminPort(), R"(sluice_upstream_timeouts_by_kind_total{cluster="echo",kind="per_try"})");
  const double retried =
      metric(gw.adminPort(),
             R"(sluice_upstream_retries_by_reason_total{cluster="echo",reason="per_try_timeout"})");
  std::cout << "sigstop: " << ok.load() << " ok, " << failed.load() << " failed; " << ok_stopped
            << " answered in the 5 s with b stopped; per-try timeouts " << per_try << ", retried "
            << retried << "\n";
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(ok_stopped, 100);  // traffic kept flowing through a and c
  EXPECT_GE(per_try, 1);
  EXPECT_GE(retried, per_try);  // every per-try timeout was retried
}

}  // namespace
}  // namespace sluice::test
