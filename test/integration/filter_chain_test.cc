// The host side of filter ABI 1.2 through the real binary, with the `probe` test filter
// (test/integration/fixtures/probe.cc): PAUSE from every data hook resumed by a timer, a post
// from another thread, a post for a stream that ended, the request context shared by two
// filters, attributes, buffered and replaced bodies (and their limits), local replies with
// headers, STOP without a reply, ERROR, a filter that cannot start, keep-alive after a reply.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "test/harness/certs.h"
#include "test/integration/access_log_util.h"
#include "test/integration/gateway.h"
#include "test/integration/tls_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - request_id
      - {name: probe, path: '${PROBE}'}
      - {name: probe, path: '${PROBE}', config: {role: reader}}
    access_log:
      - path: ${LOG}
      - path: ${TEXT}
        format: '%{path} %{ctx.consumer} %{ctx.auth.method}'
  - name: broken
    address: 127.0.0.1:${BROKEN}
    filters:
      - {name: probe, path: '${PROBE}', config: {fail_create: true}}
  - name: lenient
    address: 127.0.0.1:${LENIENT}
    filters:
      - {name: probe, path: '${PROBE}', failure_mode: open}
      - {name: probe, path: '${PROBE}', config: {fail_create: true}, failure_mode: open}
routes:
  - prefix: /api/
    cluster: echo
  - name: named-route
    prefix: /named/
    cluster: echo
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

uint64_t fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string hex8(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

class FilterChainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    broken_port_ = freePort();
    lenient_port_ = freePort();
    log_ = uniqueTmpPath("filter_chain.json");
    text_ = uniqueTmpPath("filter_chain.txt");
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{
                     {"BACKEND", backend_->address()},
                     {"BROKEN", std::to_string(broken_port_)},
                     {"LENIENT", std::to_string(lenient_port_)},
                     {"LOG", log_},
                     {"TEXT", text_},
                     {"PROBE", runfile("test/integration/fixtures/libprobe.so")}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static Response get(const std::string& path, const Headers& headers) {
    return httpRequest(gateway_->port(), "GET", path, headers);
  }
  static Response post(const std::string& path, const Headers& headers, const std::string& body) {
    return httpRequest(gateway_->port(), "POST", path, headers, body);
  }
  static std::string upstreamHeader(const Response& r, const std::string& name) {
    std::vector<std::string> v = echoHeaderValues(r.body, name);
    return v.empty() ? "<none>" : v[0];
  }
  // The value of a Prometheus series (first line starting with `series`), or -1.
  static double metric(const std::string& series) {
    Response r = httpGet(gateway_->adminPort(), "/stats/prometheus");
    size_t at = 0;
    while ((at = r.body.find(series, at)) != std::string::npos) {
      if (at == 0 || r.body[at - 1] == '\n') {
        size_t sp = r.body.find(' ', at + series.size());
        if (sp != std::string::npos && sp == at + series.size()) {
          return std::stod(r.body.substr(sp + 1, r.body.find('\n', sp) - sp - 1));
        }
      }
      at += series.size();
    }
    return -1;
  }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline int broken_port_ = 0;
  static inline int lenient_port_ = 0;
  static inline std::string log_;
  static inline std::string text_;
};

TEST_F(FilterChainTest, PauseInRequestHeadersIsResumedByATimer) {
  auto start = std::chrono::steady_clock::now();
  Response r =
      get("/api/pause", {{"X-Probe-Pause", "request_headers"}, {"X-Probe-Delay-Ms", "200"}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("X-Probe-Resumed"), "request_headers");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(190));
}

TEST_F(FilterChainTest, PauseInRequestBodyHoldsTheBodyUntilTheTimer) {
  // 1 MiB: more than the host holds before it stops reading the client (flow control).
  std::string body(1 << 20, 'b');
  for (size_t i = 0; i < body.size(); i += 997) body[i] = static_cast<char>('a' + i % 26);
  Response r = post("/api/upload", {{"X-Probe-Pause", "request_body"}}, body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("X-Probe-Resumed"), "request_body");
  EXPECT_EQ(echoNumber(r.body, "body_length"), static_cast<int64_t>(body.size()));
  EXPECT_EQ(echoString(r.body, "body_fnv1a").value_or(""), hex8(fnv1a(body)));
  EXPECT_EQ(r.header("X-Probe-Body-Seen"), std::to_string(body.size()));
}

TEST_F(FilterChainTest, PauseInResponseHeadersIsResumedByATimer) {
  Response r = get("/api/resp", {{"X-Probe-Pause", "response_headers"}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("X-Probe-Resumed"), "response_headers");
  EXPECT_EQ(echoString(r.body, "path").value_or(""), "/api/resp");
}

TEST_F(FilterChainTest, APostFromAnotherThreadResumesTheRequest) {
  Response r = get("/api/posted", {{"X-Probe-Thread", "1"}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(upstreamHeader(r, "X-Probe-Posted"), "yes");
}

TEST_F(FilterChainTest, APostForAStreamThatEndedGetsNull) {
  const double before = metric("sluice_plugin_probe_posts_gone_total");
  {
    RawConnection c(gateway_->port());
    ASSERT_TRUE(c.connected());
    // A body announced but never sent: the client going away ends the stream (a complete
    // request would be answered after a half-close).
    ASSERT_TRUE(
        c.send("POST /api/gone HTTP/1.1\r\nHost: x\r\nX-Probe-Post-After-Ms: 300\r\n"
               "Content-Length: 10\r\n\r\n"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }  // the client goes away while the filter waits
  double after = -1;
  for (int i = 0; i < 100 && after < before + 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    after = metric("sluice_plugin_probe_posts_gone_total");
  }
  EXPECT_EQ(after, (before < 0 ? 0 : before) + 1);
  EXPECT_EQ(get("/api/after", {}).status, 200);  // still serving
}

TEST_F(FilterChainTest, TheContextIsSharedBetweenFilters) {
  Response r = get("/api/ctx", {{"X-Probe-Set-Context", "consumer=alice"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(upstreamHeader(r, "X-Ctx-consumer"), "alice");
  EXPECT_EQ(upstreamHeader(r, "X-Ctx-Refused"), "yes");  // bad key, value over 4096 bytes
  // Per request: the next request does not see it.
  Response next = get("/api/ctx", {});
  EXPECT_EQ(upstreamHeader(next, "X-Ctx-consumer"), "<none>");
}

TEST_F(FilterChainTest, TheHostChecksTheFieldsAFilterSets) {
  Response r = get("/api/set", {{"X-Probe-Set-Headers", "1"}, {"X-Request-Id", "client-id"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(upstreamHeader(r, "X-Probe-Header-Results"), "yyyynnnn");
  // Set replaces every copy (the client's too); the filter's spelling of an appended name is
  // kept, interned or not; refused calls changed nothing.
  const std::vector<std::string> lines = echoHeaders(r.body);
  auto has = [&](const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  EXPECT_EQ(echoHeaderValues(r.body, "X-Request-Id"), std::vector<std::string>{"probe-id"});
  EXPECT_TRUE(has("X-Forwarded-Host: probe")) << r.body;
  EXPECT_TRUE(has("VIA: 1.1 probe")) << r.body;
  EXPECT_TRUE(has("X-Probe-Other: other")) << r.body;
  EXPECT_TRUE(echoHeaderValues(r.body, "Bad Name").empty());
  EXPECT_NE(upstreamHeader(r, "Host").find("127.0.0.1"), std::string::npos) << r.body;
}

TEST_F(FilterChainTest, TheContextIsInTheAccessLog) {
  ASSERT_EQ(get("/api/logged-ctx", {{"X-Probe-Set-Context", "consumer=bob"}}).status, 200);
  ASSERT_EQ(get("/api/logged-none", {}).status, 200);
  std::vector<nlohmann::json> lines = waitForRequests(log_, "/api/logged-ctx");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["ctx"], nlohmann::json({{"consumer", "bob"}}));
  std::vector<nlohmann::json> none = waitForRequests(log_, "/api/logged-none");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0]["ctx"], nlohmann::json::object());
  EXPECT_EQ(waitForLines(text_, 1, "/api/logged-ctx bob -").size(), 1u);
  EXPECT_EQ(waitForLines(text_, 1, "/api/logged-none - -").size(), 1u);
}

TEST_F(FilterChainTest, PerFilterMetrics) {
  const std::string probe = "{listener=\"edge\",filter=\"probe\"}";
  const std::string rid = "{listener=\"edge\",filter=\"request_id\"}";
  auto value = [](const std::string& series) { return std::max(0.0, metric(series)); };
  const double calls = value("sluice_filter_calls_total" + probe);
  const double rid_calls = value("sluice_filter_calls_total" + rid);
  const double replies = value("sluice_filter_local_replies_total" + probe);
  const double errors = value("sluice_filter_errors_total" + probe);
  const double timed = value("sluice_filter_duration_seconds_count" + probe);
  const double broken = value("sluice_filter_errors_total{listener=\"broken\",filter=\"probe\"}");
  ASSERT_EQ(get("/api/m/status/204", {}).status, 204);  // no body: no body hooks
  ASSERT_EQ(get("/api/m", {{"X-Probe-Reply", "429"}}).status, 429);
  ASSERT_EQ(get("/api/m", {{"X-Probe-Error", "request_headers"}}).status, 500);
  ASSERT_EQ(httpRequest(broken_port_, "GET", "/api/m").status, 500);
  // Counted when each request ends, before its last byte went out; scrapes sum every worker.
  for (int i = 0; i < 100 && value("sluice_filter_calls_total" + probe) < calls + 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(value("sluice_filter_local_replies_total" + probe), replies + 1);
  EXPECT_EQ(value("sluice_filter_errors_total" + probe), errors + 1);
  EXPECT_EQ(value("sluice_filter_errors_total{listener=\"broken\",filter=\"probe\"}"), broken + 1);
  // Both probe entries count under one series: 204: 2 x (request + response headers);
  // 429: the first probe's request headers, then both response hooks of the reply; 500: the
  // first probe's request headers and both response hooks.
  EXPECT_EQ(value("sluice_filter_calls_total" + probe), calls + 4 + 3 + 3);
  EXPECT_EQ(value("sluice_filter_calls_total" + rid), rid_calls + 3 * 2);
  // The hook time is measured on 1 stream in 16 of each chain on each worker (the first one
  // included): any n consecutive streams of a worker's chain have floor(n/16) or ceil(n/16)
  // timed ones, and a timed stream observes once per entry (two probe entries).
  const double timed_before = value("sluice_filter_duration_seconds_count" + probe);
  EXPECT_GE(timed_before, timed);
  EXPECT_LE(timed_before, timed + 2 * 3);
  const double calls_before = value("sluice_filter_calls_total" + probe);
  constexpr int kRequests = 64;  // 4 timed, give or take one per worker (2)
  for (int i = 0; i < kRequests; ++i) ASSERT_EQ(get("/api/m/status/204", {}).status, 204);
  for (int i = 0;
       i < 100 && value("sluice_filter_calls_total" + probe) < calls_before + 4 * kRequests; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(value("sluice_filter_calls_total" + probe), calls_before + 4 * kRequests);  // all
  const double timed_after = value("sluice_filter_duration_seconds_count" + probe) - timed_before;
  EXPECT_GE(timed_after, 2 * (kRequests / 16 - 2));
  EXPECT_LE(timed_after, 2 * (kRequests / 16 + 2));
  EXPECT_EQ(static_cast<int64_t>(timed_after) % 2, 0);  // both entries of a timed stream
}

TEST_F(FilterChainTest, AttributesOfARoutedRequest) {
  Response r = get("/api/attrs?q=1", {{"X-Probe-Attrs", "1"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Route"), "/api/");  // an unnamed route: its prefix
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Cluster"), "echo");
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Listener"), "edge");
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Upstream-Path"), "/api/attrs?q=1");
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Protocol"), "HTTP/1.1");
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Request-Id"), upstreamHeader(r, "X-Request-Id"));
  EXPECT_NE(upstreamHeader(r, "X-Request-Id"), "<none>");
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Sni"), "-");  // plain connection: absent
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Tls-Version"), "-");
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Start-Ok"), "yes");
  // First-segment routing: the route is named by the segment's prefix.
  Response seg = get("/echo/x", {{"X-Probe-Attrs", "1"}});
  ASSERT_EQ(seg.status, 200);
  EXPECT_EQ(upstreamHeader(seg, "X-Attr-Route"), "/echo");
  EXPECT_EQ(upstreamHeader(seg, "X-Attr-Cluster"), "echo");
}

TEST_F(FilterChainTest, NoRouteStillRunsTheChainAndThe404PassesResponseFilters) {
  Response r = get("/nowhere/x", {{"X-Probe-Attrs", "1"}});
  EXPECT_TRUE(isJsonError(r, 404)) << r.status << " " << r.body;
  EXPECT_EQ(r.header("X-Probe-Body-Seen"), "0");  // the probe's response hook ran
  EXPECT_FALSE(r.header("X-Request-Id").empty());
  // A filter's reply comes before routing: an unauthenticated client learns nothing.
  EXPECT_EQ(get("/nowhere/x", {{"X-Probe-Reply", "401"}}).status, 401);
}

TEST_F(FilterChainTest, ABufferedRequestBodyIsReplacedWithItsContentLength) {
  Response r = post("/api/upload",
                    {{"X-Probe-Buffer-Request", "1000"}, {"X-Probe-Replace-Request", "1"}}, "abc");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(echoNumber(r.body, "body_length"), 12);  // "replaced:abc"
  EXPECT_EQ(echoString(r.body, "body_fnv1a").value_or(""), hex8(fnv1a("replaced:abc")));
  EXPECT_EQ(upstreamHeader(r, "Content-Length"), "12");
  // A chunked request: the replacement goes with Content-Length, no chunked framing.
  RawConnection c(gateway_->port());
  ASSERT_TRUE(
      c.send("POST /api/upload HTTP/1.1\r\nHost: x\r\nX-Probe-Buffer-Request: 1000\r\n"
             "X-Probe-Replace-Request: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
             "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"));
  Response chunked = c.readResponse();
  ASSERT_EQ(chunked.status, 200) << chunked.body;
  EXPECT_EQ(echoNumber(chunked.body, "body_length"), 16);  // "replaced:abcdefg"
  EXPECT_EQ(upstreamHeader(chunked, "Content-Length"), "16");
  EXPECT_EQ(upstreamHeader(chunked, "Transfer-Encoding"), "<none>");
}

TEST_F(FilterChainTest, ARequestBodyOverTheBufferLimitIs413) {
  Response r = post("/api/upload", {{"X-Probe-Buffer-Request", "100"}}, std::string(500, 'x'));
  EXPECT_TRUE(isJsonError(r, 413)) << r.status << " " << r.body;
  // Within the limit it goes through unchanged.
  Response ok = post("/api/upload", {{"X-Probe-Buffer-Request", "100"}}, std::string(100, 'x'));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(echoNumber(ok.body, "body_length"), 100);
  EXPECT_EQ(ok.header("X-Probe-Body-Seen"), "100");
}

TEST_F(FilterChainTest, ABufferedResponseBodyIsReplacedWithItsContentLength) {
  // The backend streams /bytes/N chunked; the client gets the replacement with Content-Length.
  Response r = get("/api/bytes/50000", {{"X-Probe-Buffer-Response", "100000"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "response-replaced:50000");
  EXPECT_EQ(r.header("Content-Length"), std::to_string(r.body.size()));
  EXPECT_FALSE(r.chunked);
}

TEST_F(FilterChainTest, AResponseBodyOverTheBufferLimitIs502) {
  Response r = get("/api/bytes/50000", {{"X-Probe-Buffer-Response", "1000"}});
  EXPECT_TRUE(isJsonError(r, 502)) << r.status << " " << r.body;
}

TEST_F(FilterChainTest, ALocalReplyCarriesItsHeadersButNoFramingOrInvalidOnes) {
  Response r = get("/api/deny", {{"X-Probe-Reply", "401"}});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, "denied\n");
  EXPECT_EQ(r.header("WWW-Authenticate"), "Basic realm=\"probe\"");
  EXPECT_EQ(r.header("X-Probe"), "replied");
  EXPECT_EQ(r.header("Content-Length"), "7");  // the filter's 999 was dropped
  EXPECT_EQ(r.headerCount("Content-Length"), 1u);
  EXPECT_EQ(r.headerCount("Bad Name"), 0u);
  EXPECT_FALSE(r.header("X-Request-Id").empty());  // the reply passed the response filters
}

TEST_F(FilterChainTest, ALocalReplyKeepsTheConnectionAlive) {
  RawConnection c(gateway_->port());
  ASSERT_TRUE(c.send(buildRequest("GET", "/api/a", {{"X-Probe-Reply", "401"}}, "", 1)));
  Response first = c.readResponse();
  EXPECT_EQ(first.status, 401);
  EXPECT_TRUE(first.keep_alive);
  EXPECT_NE(first.header("Connection"), "close");
  // A request with a complete small body, answered locally: still alive.
  ASSERT_TRUE(c.send(buildRequest("POST", "/api/b", {{"X-Probe-Reply", "403"}}, "hello", 1)));
  Response second = c.readResponse();
  EXPECT_EQ(second.status, 403);
  EXPECT_TRUE(second.keep_alive);
  ASSERT_TRUE(c.send(buildRequest("GET", "/api/c", {}, "", 1)));
  Response third = c.readResponse();
  EXPECT_EQ(third.status, 200) << third.error;
}

TEST_F(FilterChainTest, StopWithoutAReplyIs500) {
  Response r = get("/api/stop", {{"X-Probe-Stop", "1"}});
  EXPECT_TRUE(isJsonError(r, 500)) << r.status << " " << r.body;
}

TEST_F(FilterChainTest, ErrorWithFailureModeClosedIs500) {
  for (const char* hook : {"request_headers", "request_body", "response_headers"}) {
    Response r = post("/api/err", {{"X-Probe-Error", hook}}, "body");
    EXPECT_TRUE(isJsonError(r, 500)) << hook << ": " << r.status << " " << r.body;
  }
}

TEST_F(FilterChainTest, FailureModeOpenGoesOnAndCountsTheError) {
  const std::string series = "sluice_filter_errors_total{listener=\"lenient\",filter=\"probe\"}";
  const double before = std::max(0.0, metric(series));
  // The first entry returns ERROR, the second cannot start: both open, so the request is served.
  for (const char* hook : {"request_headers", "request_body", "response_headers"}) {
    Response r = httpRequest(lenient_port_, "POST", "/api/open", {{"X-Probe-Error", hook}}, "b");
    EXPECT_EQ(r.status, 200) << hook << ": " << r.body;
    EXPECT_EQ(echoNumber(r.body, "body_length"), 1) << hook;
  }
  double after = 0;
  for (int i = 0; i < 100 && (after = metric(series)) < before + 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // ERRORs: 1 (request headers) + 2 (both request body calls: the piece, then its end) + 1
  // (response headers), and the 3 requests the second entry could not start for.
  EXPECT_EQ(after, before + 7);
}

TEST_F(FilterChainTest, AFilterRewritesTheUpstreamPathButNotTheLoggedOne) {
  Response r = get("/api/orig?key=secret", {{"X-Probe-Set-Path", "/api/clean?x=%41"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(upstreamHeader(r, "X-Probe-Path-Set"), "yes");
  EXPECT_EQ(echoString(r.body, "path").value_or(""), "/api/clean?x=%41");
  EXPECT_EQ(r.header("X-Probe-Late-Path"), "no");  // from a response hook: too late
  std::vector<nlohmann::json> lines = waitForRequests(log_, "/api/orig?key=secret");
  EXPECT_EQ(lines.size(), 1u);  // the access log keeps the client's target
  for (const char* bad : {"no-slash", "/a b", "/a#frag", "/bad%4"}) {
    Response refused = get("/api/kept", {{"X-Probe-Set-Path", bad}});
    EXPECT_EQ(upstreamHeader(refused, "X-Probe-Path-Set"), "no") << bad;
    EXPECT_EQ(echoString(refused.body, "path").value_or(""), "/api/kept") << bad;
  }
}

TEST_F(FilterChainTest, ANamedRouteIsItsName) {
  Response r = get("/named/x", {{"X-Probe-Attrs", "1"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(upstreamHeader(r, "X-Attr-Route"), "named-route");
}

TEST_F(FilterChainTest, AFilterThatCannotStartAnswers500WhenClosed) {
  Response r = httpRequest(broken_port_, "GET", "/api/x");
  EXPECT_TRUE(isJsonError(r, 500)) << r.status << " " << r.body;
}

// TLS facts as attributes: SNI and version on a TLS listener, the verified client
// certificate's subject when there is one.
TEST(FilterChainTlsTest, TlsAttributes) {
  TestPki pki;
  CertOptions server;
  server.dns = {"a.test"};
  CertFiles cert = pki.issue("a", server);
  CertOptions client;
  client.client = true;
  client.common_name = "alice";
  CertFiles alice = pki.issue("alice", client);
  EchoBackend backend("echo");
  Gateway gw(R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: secure
    address: 127.0.0.1:${PORT}
    tls:
      client_ca: ${CA}
      verify: optional
      certificates: [{ cert_chain: ${CERT}, private_key: ${KEY} }]
    filters: [{name: probe, path: '${PROBE}'}]
routes:
  - { prefix: /, cluster: echo }
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)",
             {{"BACKEND", backend.address()},
              {"CA", pki.caFile()},
              {"CERT", cert.cert},
              {"KEY", cert.key},
              {"PROBE", runfile("test/integration/fixtures/libprobe.so")}});
  ASSERT_TRUE(gw.ready());
  auto attr = [](const Response& r, const std::string& name) {
    std::vector<std::string> v = echoHeaderValues(r.body, "X-Attr-" + name);
    return v.empty() ? std::string("<none>") : v[0];
  };
  TlsOptions anonymous = trusting(pki, "a.test");
  HttpsExchange plain = httpsRequest(gw.port(), anonymous, "/x", {{"X-Probe-Attrs", "1"}});
  ASSERT_TRUE(plain.tls.ok) << plain.tls.error;
  ASSERT_EQ(plain.response.status, 200) << plain.response.body;
  EXPECT_EQ(attr(plain.response, "Sni"), "a.test");
  EXPECT_EQ(attr(plain.response, "Tls-Version"), plain.tls.version);
  EXPECT_EQ(attr(plain.response, "Peer-Subject"), "-");  // no client certificate
  EXPECT_EQ(attr(plain.response, "Listener"), "secure");
  EXPECT_EQ(attr(plain.response, "Route"), "/");
  TlsOptions with_cert = anonymous;
  with_cert.cert_chain = alice.cert;
  with_cert.private_key = alice.key;
  HttpsExchange verified = httpsRequest(gw.port(), with_cert, "/x", {{"X-Probe-Attrs", "1"}});
  ASSERT_TRUE(verified.tls.ok) << verified.tls.error;
  ASSERT_EQ(verified.response.status, 200);
  EXPECT_EQ(attr(verified.response, "Peer-Subject"), "CN=alice,O=sluice tests");  // RFC 2253
}

}  // namespace
}  // namespace sluice::test
