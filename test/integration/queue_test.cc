// max_requests_per_host and the wait queue against real processes: a two-worker sluice in front
// of slow backends that count their own concurrent requests and record the order requests
// arrive in. Proves: never more than the limit in flight at a host (summed over both workers),
// queued requests dispatched first come first served, a request whose queue time runs out gets
// 503 with Retry-After and never reaches the backend, a full queue answers 503 at once, a client
// that leaves while queued is never sent upstream, and a reload keeps the queue (a removed
// cluster answers its waiting requests 503).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "test/integration/access_log_util.h"
#include "test/integration/gateway.h"
#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

using namespace std::chrono_literals;

// A backend that answers each request after `delay_ms`, counting how many it serves at once.
class SlowBackend {
 public:
  explicit SlowBackend(int delay_ms)
      : upstream_([this, delay_ms](const std::string&, int) {
          int now = ++inside_;
          int seen = most_.load();
          while (now > seen && !most_.compare_exchange_weak(seen, now)) {
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
          --inside_;
          return ScriptedUpstream::Reply{okResponse("served")};
        }) {}

  std::string address() const { return upstream_.address(); }
  // The most requests it was ever serving at once.
  int mostInFlight() const { return most_; }
  // Request paths in arrival order ("/slow/seq/3").
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const std::string& head : upstream_.requests()) {
      size_t sp = head.find(' ');
      out.push_back(head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1));
    }
    return out;
  }

 private:
  std::atomic<int> inside_{0};
  std::atomic<int> most_{0};
  ScriptedUpstream upstream_;  // last: its threads call the handler, which uses the counters
};

// Polls `cond` for up to `ms`.
bool eventually(const std::function<bool()>& cond, int ms = 15000) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (cond()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return cond();
}

// The value of sample `series` (e.g. `sluice_upstream_queued_total{cluster="slow"}`) in
// /stats/prometheus; -1 when absent.
int64_t metric(int admin_port, const std::string& series) {
  Response r = httpGet(admin_port, "/stats/prometheus");
  size_t at = 0;
  while ((at = r.body.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || r.body[at - 1] == '\n') return std::atoll(r.body.c_str() + at + series.size());
    at += series.size();
  }
  return -1;
}

std::string series(const std::string& family, const std::string& cluster) {
  return family + "{cluster=\"" + cluster + "\"}";
}

// A client in its own thread: one GET on its own connection; the response lands in `out`.
struct Client {
  Client(int port, std::string path) : path_(std::move(path)) {
    thread_ = std::thread([this, port] {
      RawConnection conn(port, 60000);
      if (!conn.send(buildRequest("GET", path_, {}, "", port))) return;
      response_ = conn.readResponse();
    });
  }
  ~Client() { join(); }
  const Response& response() {
    join();
    return response_;
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::string path_;
  Response response_;
  std::thread thread_;
};

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    access_log: { path: ${LOG} }
clusters:
  - name: slow
    retries: 0
    response_timeout_ms: 60000
    max_requests_per_host: 2
    queue_timeout_ms: 60000
    endpoints: [${SLOW}]
  - name: expire
    retries: 0
    response_timeout_ms: 60000
    max_requests_per_host: 1
    max_queue: 2
    queue_timeout_ms: 300
    endpoints: [${EXPIRE}]
  - name: gone
    retries: 0
    response_timeout_ms: 60000
    max_requests_per_host: 1
    queue_timeout_ms: 60000
    endpoints: [${GONE}]
${EXTRA}
)";

TEST(QueueTest, TwentyClientsTwoSlotsFirstComeFirstServed) {
  constexpr int kClients = 20;
  // Requests 0 and 1 start 600 ms apart, so the slots free one at a time (every 600 ms) and
  // each dispatch is alone: the backend's arrival order is the queue's order, exactly.
  SlowBackend backend(1200);
  Gateway gateway(kConfig, {{"SLOW", backend.address()},
                            {"EXPIRE", DeadPort().address()},
                            {"GONE", DeadPort().address()},
                            {"EXTRA", ""},
                            {"LOG", uniqueTmpPath("queue.log")}});
  ASSERT_TRUE(gateway.ready());
  const int admin = gateway.adminPort();
  const std::string queued = series("sluice_upstream_queued_total", "slow");

  // Client i starts once the request before it is in flight at the backend (0 and 1) or counted
  // as queued in sluice (2 and on): sluice sees them strictly in index order, whichever of the
  // two workers each connection lands on.
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(
        std::make_unique<Client>(gateway.port(), "/gateway/slow/seq/" + std::to_string(i)));
    if (i < 2) {
      ASSERT_TRUE(eventually([&] { return backend.paths().size() == static_cast<size_t>(i + 1); }))
          << "request " << i << " never reached the backend";
      if (i == 0) std::this_thread::sleep_for(600ms);
    } else {
      ASSERT_TRUE(eventually([&] { return metric(admin, queued) == i - 1; }))
          << "request " << i << " was not queued";
    }
  }
  // While 18 wait, sluice shows them (and the host's 2 in flight).
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_length", "slow")) +
                static_cast<int64_t>(backend.paths().size()),
            kClients);
  Response clusters = httpGet(admin, "/clusters");
  EXPECT_NE(clusters.body.find("\"max_requests_per_host\": 2"), std::string::npos) << clusters.body;

  for (int i = 0; i < kClients; ++i) {
    const Response& r = clients[i]->response();
    EXPECT_EQ(r.status, 200) << "client " << i << ": " << r.error;
    EXPECT_EQ(r.body, "served");
  }
  EXPECT_LE(backend.mostInFlight(), 2);
  EXPECT_EQ(backend.mostInFlight(), 2);  // the limit is also used, not just respected
  std::vector<std::string> paths = backend.paths();
  ASSERT_EQ(paths.size(), static_cast<size_t>(kClients));
  for (int i = 0; i < kClients; ++i) EXPECT_EQ(paths[i], "/slow/seq/" + std::to_string(i));
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_dispatched_total", "slow")), 18);
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_length", "slow")), 0);
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_timeouts_total", "slow")), 0);
}

TEST(QueueTest, ExpiredRequestsGet503WithRetryAfterAndNeverReachTheBackend) {
  SlowBackend backend(3000);
  const std::string log = uniqueTmpPath("expire.log");
  Gateway gateway(kConfig, {{"SLOW", DeadPort().address()},
                            {"EXPIRE", backend.address()},
                            {"GONE", DeadPort().address()},
                            {"EXTRA", ""},
                            {"LOG", log}});
  ASSERT_TRUE(gateway.ready());
  const int admin = gateway.adminPort();

  Client first(gateway.port(), "/gateway/expire/first");
  ASSERT_TRUE(eventually([&] { return backend.paths().size() == 1; }));
  Client second(gateway.port(), "/gateway/expire/second");
  Client third(gateway.port(), "/gateway/expire/third");
  ASSERT_TRUE(eventually(
      [&] { return metric(admin, series("sluice_upstream_queued_total", "expire")) == 2; }));
  // max_queue: 2, both places taken: the next request is refused at once.
  Response overflow = httpGet(gateway.port(), "/gateway/expire/overflow");
  EXPECT_TRUE(isJsonError(overflow, 503));
  EXPECT_EQ(overflow.header("Retry-After"), "1");

  for (Client* c : {&second, &third}) {
    const Response& r = c->response();
    EXPECT_TRUE(isJsonError(r, 503)) << r.status << " " << r.error;
    EXPECT_EQ(r.header("Retry-After"), "1");
    EXPECT_NE(r.body.find("queue_timeout_ms"), std::string::npos) << r.body;
  }
  EXPECT_EQ(first.response().status, 200);
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_timeouts_total", "expire")), 2);
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_overflows_total", "expire")), 1);
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_dispatched_total", "expire")), 0);
  // The slot is free now; nothing that expired may turn up late.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(backend.paths(), std::vector<std::string>{"/expire/first"});
  // The access log says why: two queue timeouts, one overflow, each a 503 with no upstream.
  auto timeouts = waitForLines(log, 2, "queue_timeout");
  ASSERT_EQ(timeouts.size(), 2u);
  for (const std::string& line : timeouts) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["status"], 503) << line;
    EXPECT_EQ(j["upstream_host"], "") << line;
  }
  EXPECT_EQ(waitForLines(log, 1, "queue_overflow").size(), 1u);
}

TEST(QueueTest, AClientThatLeavesWhileQueuedIsNeverSentUpstream) {
  SlowBackend backend(1500);
  const std::string log = uniqueTmpPath("gone.log");
  Gateway gateway(kConfig, {{"SLOW", DeadPort().address()},
                            {"EXPIRE", DeadPort().address()},
                            {"GONE", backend.address()},
                            {"EXTRA", ""},
                            {"LOG", log}});
  ASSERT_TRUE(gateway.ready());
  const int admin = gateway.adminPort();

  Client first(gateway.port(), "/gateway/gone/first");
  ASSERT_TRUE(eventually([&] { return backend.paths().size() == 1; }));
  {
    RawConnection leaver(gateway.port());
    ASSERT_TRUE(leaver.send(buildRequest("GET", "/gateway/gone/leaver", {}, "", gateway.port())));
    ASSERT_TRUE(eventually(
        [&] { return metric(admin, series("sluice_upstream_queue_length", "gone")) == 1; }));
  }  // closed while queued
  ASSERT_TRUE(eventually(
      [&] { return metric(admin, series("sluice_upstream_queue_cancelled_total", "gone")) == 1; }));
  EXPECT_EQ(metric(admin, series("sluice_upstream_queue_length", "gone")), 0);
  Client last(gateway.port(), "/gateway/gone/last");
  EXPECT_EQ(first.response().status, 200);
  EXPECT_EQ(last.response().status, 200);
  EXPECT_EQ(backend.paths(), (std::vector<std::string>{"/gone/first", "/gone/last"}));
  EXPECT_LE(backend.mostInFlight(), 1);
  auto left = waitForLines(log, 1, "/gateway/gone/leaver");
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left[0].find("client_reset"), std::string::npos) << left[0];
  EXPECT_EQ(nlohmann::json::parse(left[0])["upstream_host"], "") << left[0];
}

TEST(QueueTest, ARequestBodyArrivingWhileQueuedIsKeptAndSentWhole) {
  SlowBackend backend(1500);
  Gateway gateway(kConfig, {{"SLOW", DeadPort().address()},
                            {"EXPIRE", DeadPort().address()},
                            {"GONE", backend.address()},
                            {"EXTRA", ""},
                            {"LOG", uniqueTmpPath("body.log")}});
  ASSERT_TRUE(gateway.ready());
  const int admin = gateway.adminPort();
  Client first(gateway.port(), "/gateway/gone/first");
  ASSERT_TRUE(eventually([&] { return backend.paths().size() == 1; }));
  // 2 MiB: far over the 256 KiB at which sluice stops reading from a client whose request
  // cannot go anywhere yet. The backend answers only once it has read all Content-Length bytes.
  const std::string body(2 << 20, 'b');
  Response posted;
  std::thread poster([&] {
    RawConnection conn(gateway.port(), 60000);
    if (!conn.send(buildRequest("POST", "/gateway/gone/upload", {}, body, gateway.port()))) return;
    posted = conn.readResponse();
  });
  ASSERT_TRUE(eventually(
      [&] { return metric(admin, series("sluice_upstream_queued_total", "gone")) == 1; }));
  EXPECT_EQ(first.response().status, 200);
  poster.join();
  EXPECT_EQ(posted.status, 200) << posted.error;
  EXPECT_EQ(posted.body, "served");
  std::vector<std::string> paths = backend.paths();
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[1], "/gone/upload");
}

TEST(QueueTest, AWaitingRequestGoesToAnEndpointThatAReloadAdds) {
  SlowBackend busy(4000);
  SlowBackend fresh(0);
  std::map<std::string, std::string> vars{{"SLOW", DeadPort().address()},
                                          {"EXPIRE", DeadPort().address()},
                                          {"GONE", busy.address()},
                                          {"EXTRA", ""},
                                          {"LOG", uniqueTmpPath("added.log")}};
  Gateway gateway(kConfig, vars);
  ASSERT_TRUE(gateway.ready());
  const int admin = gateway.adminPort();
  Client first(gateway.port(), "/gateway/gone/first");
  ASSERT_TRUE(eventually([&] { return busy.paths().size() == 1; }));
  Client waiter(gateway.port(), "/gateway/gone/waiter");
  ASSERT_TRUE(eventually(
      [&] { return metric(admin, series("sluice_upstream_queue_length", "gone")) == 1; }));
  // The only endpoint is busy for seconds; a reload adds one with room: the waiting request
  // is handed to it at once (not when the busy one frees its slot).
  std::string added = kConfig;
  added.replace(added.find("[${GONE}]"), 9, "[${GONE}, ${FRESH}]");
  std::map<std::string, std::string> all = vars;
  all["FRESH"] = fresh.address();
  all["PORT"] = std::to_string(gateway.port());
  all["ADMIN"] = std::to_string(admin);
  all["PLUGINS"] = pluginPathsYaml();
  ASSERT_TRUE(writeFile(gateway.configPath(), substitute(added, all)));
  Response r = httpRequest(admin, "POST", "/reload");
  EXPECT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(eventually([&] { return fresh.paths().size() == 1; }));
  EXPECT_EQ(fresh.paths()[0], "/gone/waiter");
  EXPECT_EQ(busy.paths().size(), 1u);  // the busy endpoint was still busy when it moved
  EXPECT_EQ(waiter.response().status, 200);
  EXPECT_EQ(first.response().status, 200);
}

TEST(QueueTest, AReloadKeepsTheQueueAndARemovedClusterAnswersItsWaiters503) {
  SlowBackend backend(1500);
  SlowBackend other(1500);
  std::map<std::string, std::string> vars{{"SLOW", other.address()},
                                          {"EXPIRE", DeadPort().address()},
                                          {"GONE", backend.address()},
                                          {"EXTRA", ""},
                                          {"LOG", uniqueTmpPath("queue.log")}};
  Gateway gateway(kConfig, vars);
  ASSERT_TRUE(gateway.ready());
  const int admin = gateway.adminPort();
  auto reload = [&](const std::string& text) {
    std::map<std::string, std::string> all = vars;
    all["PORT"] = std::to_string(gateway.port());
    all["ADMIN"] = std::to_string(admin);
    all["PLUGINS"] = pluginPathsYaml();
    EXPECT_TRUE(writeFile(gateway.configPath(), substitute(text, all)));
    return httpRequest(admin, "POST", "/reload");
  };

  // 1. A reload that changes the cluster's settings (a new balancer instance on each worker)
  // while a request waits: it keeps waiting and is served.
  Client first(gateway.port(), "/gateway/gone/first");
  ASSERT_TRUE(eventually([&] { return backend.paths().size() == 1; }));
  Client waiter(gateway.port(), "/gateway/gone/waiter");
  ASSERT_TRUE(eventually(
      [&] { return metric(admin, series("sluice_upstream_queue_length", "gone")) == 1; }));
  std::string changed = kConfig;
  changed.replace(changed.find("    queue_timeout_ms: 60000\n    endpoints: [${GONE}]"),
                  std::string("    queue_timeout_ms: 60000\n").size(),
                  "    queue_timeout_ms: 59000\n    connect_timeout_ms: 900\n");
  Response r = reload(changed);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(first.response().status, 200);
  EXPECT_EQ(waiter.response().status, 200);
  EXPECT_EQ(backend.paths(), (std::vector<std::string>{"/gone/first", "/gone/waiter"}));

  // 2. The cluster removed while a request waits: 503 with Retry-After, never sent.
  Client busy(gateway.port(), "/gateway/slow/busy1");
  Client busy2(gateway.port(), "/gateway/slow/busy2");
  ASSERT_TRUE(eventually([&] { return other.paths().size() == 2; }));
  Client orphan(gateway.port(), "/gateway/slow/orphan");
  ASSERT_TRUE(eventually(
      [&] { return metric(admin, series("sluice_upstream_queue_length", "slow")) == 1; }));
  std::string removed = kConfig;
  size_t from = removed.find("  - name: slow");
  removed.erase(from, removed.find("  - name: expire") - from);
  r = reload(removed);
  EXPECT_EQ(r.status, 200) << r.body;
  const Response& o = orphan.response();
  EXPECT_TRUE(isJsonError(o, 503)) << o.status << " " << o.error;
  EXPECT_EQ(o.header("Retry-After"), "1");
  EXPECT_EQ(busy.response().status, 200);  // in flight: finishes on the old cluster
  EXPECT_EQ(busy2.response().status, 200);
  EXPECT_EQ(other.paths().size(), 2u);
}

}  // namespace
}  // namespace sluice::test
