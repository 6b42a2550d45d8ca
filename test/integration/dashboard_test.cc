// The admin dashboard on a running sluice with traffic: GET /stats/summary counts what was sent
// (per listener, by status class, with latency percentiles), GET / serves the compiled-in page
// with a strict Content-Security-Policy, and headless Chromium (Debian's `chromium`) renders it:
// the clusters and their hosts, charts with data points, no JavaScript error, a screenshot that
// is not blank, and "disconnected" (then "live" again) when the admin stops answering and comes
// back. Under CI=true a missing chromium fails the Chromium tests instead of skipping them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "test/harness/harness.h"
#include "test/integration/gateway.h"
#include "test/integration/png_image.h"
#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

constexpr int k2xx = 20;
constexpr int k404 = 5;
constexpr int k502 = 2;  // cluster "down": its host refuses connections
constexpr int k503 = 2;  // cluster "empty": no host at all
constexpr int k5xx = k502 + k503;
constexpr int kAll = k2xx + k404 + k5xx;
constexpr int kChromiumTimeoutMs = 90000;  // a cold start on a loaded 2-core machine, with margin

bool onCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

bool haveChromium() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

// Runs headless Chromium on `url` with `mode` ("--dump-dom" or "--screenshot=FILE") after
// `virtual_ms` of the page's (virtual) time: timers run, fetches really happen. Returns stdout.
std::string runChromium(const std::string& url, const std::string& mode, int virtual_ms) {
  const std::string profile = uniqueTmpPath("chromium-profile");
  const std::string out = uniqueTmpPath("chromium.out");
  std::string command =
      "mkdir -p '" + profile + "' && exec chromium --headless --no-sandbox --disable-gpu " +
      "--disable-quic --no-first-run --disable-background-networking " +
      "--disable-component-update --disable-sync --disable-dev-shm-usage " + "--user-data-dir='" +
      profile + "' --window-size=1400,1000 --hide-scrollbars " +
      "--virtual-time-budget=" + std::to_string(virtual_ms) + " " + mode + " '" + url + "' > '" +
      out + "'";
  // HOME: Chromium writes caches there; under Bazel the real one may be read-only.
  Process p({"/bin/sh", "-c", command}, {{"HOME", testTmpDir()}}, "chromium");
  int rc = p.waitExit(kChromiumTimeoutMs);
  if (rc != 0) {
    p.kill();
    ADD_FAILURE() << "chromium exited with " << rc << ": " << p.outputTail(20);
    return "";
  }
  return readFile(out);
}

// The start tag of the element with id `id` in `dom`, or "".
std::string startTag(const std::string& dom, const std::string& id) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("<[a-z]+ [^>]*id=\"" + id + "\"[^>]*>"))) return "";
  return m.str();
}

// The value of attribute `name` in a start tag, or "".
std::string attribute(const std::string& tag, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(tag, m, std::regex(" " + name + "=\"([^\"]*)\""))) return "";
  return m[1].str();
}

int chartPoints(const std::string& dom, const std::string& id) {
  std::string points = attribute(startTag(dom, id), "data-points");
  return points.empty() ? -1 : std::atoi(points.c_str());
}

// The text of the page's #error element (the page catches its own errors there).
std::string errorText(const std::string& dom) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("<div id=\"error\"[^>]*>([^<]*)</div>"))) {
    return "<no #error element>";
  }
  return m[1].str();
}

const char* kConfig = R"(
workers: 2
admin: {address: 127.0.0.1:${ADMIN}}
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters: [request_id]
  - name: internal
    address: 127.0.0.1:${PORT2}
    context_path: /internal
clusters:
  - name: echo
    endpoints: [${B1}]
  - name: inventory
    balancer: {name: random}
    endpoints: [{address: ${B2}, weight: 3}, ${B1}]
  - name: down
    endpoints: [${DEAD}]
    retries: 0
  - name: empty
    endpoints: []
)";

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"B1", b1_.address()},
                                                    {"B2", b2_.address()},
                                                    {"DEAD", dead_.address()},
                                                    {"PORT2", std::to_string(freePort())}});
    ASSERT_TRUE(gateway_->ready());
  }
  void TearDown() override { stopTraffic(); }

  int admin() const { return gateway_->adminPort(); }
  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(admin()) + path;
  }

  // 20 × 200, 5 × 404 (no such cluster), 2 × 502 (cluster "down"), 2 × 503 (cluster "empty").
  void sendTraffic() {
    for (int i = 0; i < k2xx; ++i) {
      ASSERT_EQ(
          httpGet(gateway_->port(), i % 2 ? "/gateway/echo/a" : "/gateway/inventory/b").status,
          200);
    }
    for (int i = 0; i < k404; ++i)
      ASSERT_EQ(httpGet(gateway_->port(), "/gateway/nope/x").status, 404);
    for (int i = 0; i < k502; ++i)
      ASSERT_EQ(httpGet(gateway_->port(), "/gateway/down/x").status, 502);
    for (int i = 0; i < k503; ++i)
      ASSERT_EQ(httpGet(gateway_->port(), "/gateway/empty/x").status, 503);
  }

  // Requests in a loop (mostly 2xx, some 404 and 503) until stopTraffic(), so the page sees
  // rates and latencies change while it polls.
  void startTraffic() {
    traffic_ = std::thread([this] {
      for (int i = 0; !stop_; ++i) {
        const char* path = i % 10 == 0   ? "/gateway/nope/x"
                           : i % 15 == 0 ? "/gateway/empty/x"
                           : i % 3 == 0  ? "/gateway/inventory/delay/3"
                                         : "/gateway/echo/ok";
        httpGet(gateway_->port(), path);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  void stopTraffic() {
    stop_ = true;
    if (traffic_.joinable()) traffic_.join();
  }

  bool needChromium() {
    if (haveChromium()) return true;
    if (onCi()) {
      ADD_FAILURE() << "chromium is missing (Debian package chromium: tools/install_deps --test)";
    }
    return false;
  }

  EchoBackend b1_{"b1"};
  EchoBackend b2_{"b2"};
  DeadPort dead_;
  std::unique_ptr<Gateway> gateway_;
  std::atomic<bool> stop_{false};
  std::thread traffic_;
};

// A stand-in admin for the page: relays every request to the real one (with the headers the
// page depends on), answering each /stats/summary after `delay_ms` of real time, and none of
// polls `down_from` to `down_to` - 1 (counting /stats/summary requests from 0): the connection
// closes unanswered, as when sluice restarts or the admin is unreachable. The delay matters
// under --virtual-time-budget: the page's timers fire as fast as Chromium can run them, but time
// stops while a fetch is pending, so the delay lets traffic happen between two polls.
class AdminRelay {
 public:
  AdminRelay(int real_admin, int delay_ms, int down_from = 0, int down_to = 0)
      : delay_ms_(delay_ms),
        down_from_(down_from),
        down_to_(down_to),
        upstream_(
            [this, real_admin](const std::string& head, int) { return relay(real_admin, head); }) {}
  std::string url() const { return "http://127.0.0.1:" + std::to_string(upstream_.port()) + "/"; }
  int polls() const { return polls_; }

 private:
  ScriptedUpstream::Reply relay(int real_admin, const std::string& head) {
    std::string path = head.substr(4, head.find(' ', 4) - 4);
    if (path == "/stats/summary") {  // the page needs it and /clusters for every update
      int poll = polls_++;
      if (poll >= down_from_ && poll < down_to_) return {"", true};
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    }
    Response r = httpGet(real_admin, path);
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " X\r\n";
    for (const char* name :
         {"Content-Type", "Cache-Control", "Content-Security-Policy", "X-Content-Type-Options"}) {
      if (!r.header(name).empty()) out += std::string(name) + ": " + r.header(name) + "\r\n";
    }
    return {out + "Content-Length: " + std::to_string(r.body.size()) + "\r\n\r\n" + r.body};
  }

  const int delay_ms_;
  const int down_from_;
  const int down_to_;
  std::atomic<int> polls_{0};
  ScriptedUpstream upstream_;  // last: its threads use the fields above
};

TEST_F(DashboardTest, SummaryCountsResponsesPerListenerWithPercentiles) {
  sendTraffic();
  Response r = httpGet(admin(), "/stats/summary");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  nlohmann::json s = nlohmann::json::parse(r.body);
  EXPECT_EQ(s["config_version"], 1);
  EXPECT_EQ(s["workers"], 2);
  EXPECT_EQ(s["draining"], false);
  EXPECT_EQ(s["reloads_ok"], 0);
  EXPECT_TRUE(s["last_reload"].is_null());
  EXPECT_GE(s["time_ms"].get<uint64_t>() / 1000, s["started_at"].get<uint64_t>());

  ASSERT_EQ(s["listeners"].size(), 2u);
  const nlohmann::json& edge = s["listeners"][0];
  EXPECT_EQ(edge["name"], "edge");
  EXPECT_EQ(edge["address"], "127.0.0.1:" + std::to_string(gateway_->port()));
  EXPECT_EQ(edge["context_path"], "/gateway");
  EXPECT_EQ(edge["tls"], false);
  EXPECT_EQ(edge["responses"]["2xx"], k2xx);
  EXPECT_EQ(edge["responses"]["4xx"], k404);
  EXPECT_EQ(edge["responses"]["5xx"], k5xx);
  EXPECT_EQ(edge["received"], kAll);
  const nlohmann::json& d = edge["duration_seconds"];
  EXPECT_EQ(d["count"], kAll);
  EXPECT_EQ(d["counts"].size(), d["le"].size() + 1);
  uint64_t in_buckets = 0;
  for (const auto& c : d["counts"]) in_buckets += c.get<uint64_t>();
  EXPECT_EQ(in_buckets, static_cast<uint64_t>(kAll));
  ASSERT_TRUE(d["p50"].is_number() && d["p90"].is_number() && d["p99"].is_number()) << d;
  EXPECT_GT(d["p50"].get<double>(), 0);
  EXPECT_LE(d["p50"].get<double>(), d["p90"].get<double>());
  EXPECT_LE(d["p90"].get<double>(), d["p99"].get<double>());
  EXPECT_LT(d["p99"].get<double>(), 5.0);  // loopback requests, well under the 5 s bucket

  // The idle listener: zeros and no percentile (null, not 0).
  const nlohmann::json& internal = s["listeners"][1];
  EXPECT_EQ(internal["name"], "internal");
  EXPECT_EQ(internal["responses"]["2xx"], 0);
  EXPECT_TRUE(internal["duration_seconds"]["p99"].is_null());
  // The total is the sum over listeners.
  EXPECT_EQ(s["total"]["responses"]["2xx"], k2xx);
  EXPECT_EQ(s["total"]["duration_seconds"]["count"], kAll);
}

TEST_F(DashboardTest, ServesThePageWithAStrictContentSecurityPolicy) {
  Response page = httpGet(admin(), "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.header("Cache-Control"), "no-store");
  const std::string csp = page.header("Content-Security-Policy");
  EXPECT_EQ(csp.rfind("default-src 'self';", 0), 0u) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
  EXPECT_EQ(page.header("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(page.body.find("<script src=\"/dashboard/app.js\""), std::string::npos);

  Response js = httpGet(admin(), "/dashboard/app.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.header("Content-Security-Policy"), csp);
  EXPECT_NE(js.body.find("/stats/summary"), std::string::npos);
  Response css = httpGet(admin(), "/dashboard/style.css");
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.header("Content-Type"), "text/css; charset=utf-8");

  EXPECT_EQ(httpGet(admin(), "/dashboard/missing.js").status, 404);
  EXPECT_EQ(httpGet(admin(), "/app.js").status, 404);  // assets only under /dashboard/
  EXPECT_EQ(httpRequest(admin(), "POST", "/").status, 404);
  EXPECT_EQ(httpRequest(admin(), "HEAD", "/").status, 200);
}

TEST_F(DashboardTest, ChromiumRendersClustersHostsAndChartsWithData) {
  if (!needChromium()) GTEST_SKIP() << "chromium not installed (Debian package chromium)";
  sendTraffic();
  startTraffic();
  // About 8 polls of virtual time, 150 ms of real time apart.
  AdminRelay relay(admin(), 150);
  const std::string dom = runChromium(relay.url(), "--dump-dom", 8000);
  ASSERT_FALSE(dom.empty());
  EXPECT_EQ(errorText(dom), "") << dom.substr(0, 4000);
  EXPECT_EQ(attribute(startTag(dom, "status"), "data-state"), "live");
  for (const char* cluster : {"echo", "inventory", "down", "empty"}) {
    EXPECT_NE(dom.find(std::string("data-cluster=\"") + cluster + "\""), std::string::npos)
        << cluster;
  }
  for (const std::string& host : {b1_.address(), b2_.address(), dead_.address()}) {
    EXPECT_NE(dom.find("data-host=\"" + host + "\""), std::string::npos) << host;
  }
  EXPECT_NE(dom.find(">random<"), std::string::npos);  // inventory's balancer
  EXPECT_NE(dom.find("data-listener=\"edge\""), std::string::npos);
  EXPECT_NE(dom.find("127.0.0.1:" + std::to_string(gateway_->port())), std::string::npos);
  // Charts: one point per poll after the first, drawn as SVG paths.
  EXPECT_GE(chartPoints(dom, "chart-rate"), 3) << startTag(dom, "chart-rate");
  EXPECT_GE(chartPoints(dom, "chart-errors"), 3) << startTag(dom, "chart-errors");
  EXPECT_GE(chartPoints(dom, "chart-latency"), 3) << startTag(dom, "chart-latency");
  EXPECT_NE(dom.find("<path class=\"line s0\" d=\"M"), std::string::npos);
  // The header: config version 1 and a running (not draining) proxy.
  EXPECT_NE(dom.find("<dd id=\"fact-config\">1</dd>"), std::string::npos);
  EXPECT_NE(dom.find(">serving</dd>"), std::string::npos);

  // The screenshot straight from sluice's admin (its real headers, Content-Security-Policy too).
  const std::string shot = uniqueTmpPath("dashboard.png");
  runChromium(url(), "--screenshot=" + shot, 6000);
  PngImage image;
  std::string error;
  ASSERT_TRUE(decodePng(readFile(shot), &image, &error)) << error;
  EXPECT_EQ(image.width, 1400);
  EXPECT_EQ(image.height, 1000);
  PngContent content = measure(image);
  // A blank page is one colour; this one has text, tables, a dark header and coloured lines.
  EXPECT_GT(content.colours, 50u);
  EXPECT_GT(content.foreground, 0.10);
  EXPECT_GT(content.count(0x1d2430), 1400u * 30) << "the header band";
  EXPECT_GT(content.count(0x2563eb) + content.count(0x15803d), 200u) << "lines and health dots";
}

TEST_F(DashboardTest, ChromiumShowsDisconnectedThenLiveAgain) {
  if (!needChromium()) GTEST_SKIP() << "chromium not installed (Debian package chromium)";
  sendTraffic();
  {
    AdminRelay flaky(admin(), 0, 3, 1000);  // unreachable after three polls, for good
    const std::string dom = runChromium(flaky.url(), "--dump-dom", 12000);
    EXPECT_EQ(errorText(dom), "");
    const std::string status = startTag(dom, "status");
    EXPECT_EQ(attribute(status, "data-state"), "disconnected") << status;
    EXPECT_NE(dom.find("disconnected — retrying in"), std::string::npos);
    EXPECT_GE(flaky.polls(), 5) << "the page keeps retrying";
    EXPECT_NE(dom.find("data-cluster=\"inventory\""), std::string::npos)
        << "the last known state stays on the page";
  }
  {
    AdminRelay flaky(admin(), 0, 2, 5);  // three polls lost, then back
    const std::string dom = runChromium(flaky.url(), "--dump-dom", 20000);
    EXPECT_EQ(errorText(dom), "");
    EXPECT_EQ(attribute(startTag(dom, "status"), "data-state"), "live");
    EXPECT_GT(flaky.polls(), 6);
    EXPECT_GE(chartPoints(dom, "chart-rate"), 3);
  }
}

}  // namespace
}  // namespace sluice::test
