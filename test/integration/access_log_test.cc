// Access log lines through the real binary: one line per request with the facts an operator
// reads (status, method, path, upstream host, request id, bytes, flags), for proxied requests
// and for every way sluice answers itself: no route, no healthy host, connect failure, codec
// refusal, a filter's local reply, and a client that goes away.
#include <gtest/gtest.h>

#include <memory>
#include <regex>

#include "test/integration/access_log_util.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    filters: [request_id, {name: deny, path: '${DENY}'}]
    access_log:
      - path: ${LOG}
      - path: ${TEXT}
        format: '%{method} %{path} %{status} %{response_flags} %{local_reply_filter} %%'
clusters:
  - name: echo
    endpoints: [${BACKEND}]
  - name: dead
    retries: 0
    endpoints: [${DEAD}]
  - name: empty
    endpoints: []
)";

const std::regex kUuid("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
const std::regex kTime("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");

class AccessLogTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    dead_ = std::make_unique<DeadPort>();
    log_ = uniqueTmpPath("access.json");
    text_ = uniqueTmpPath("access.txt");
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{
                     {"BACKEND", backend_->address()},
                     {"DEAD", dead_->address()},
                     {"LOG", log_},
                     {"TEXT", text_},
                     {"DENY", runfile("test/integration/fixtures/libdeny.so")}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
    dead_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  // The one JSON line for `path`, after a later request's line was written too (one worker
  // writes its lines in order, so a second line for `path` would be in the file by then).
  static nlohmann::json onlyLine(const std::string& path) {
    std::string marker = "/gateway/echo/marker-" + std::to_string(++markers_);
    EXPECT_EQ(httpGet(gateway_->port(), marker).status, 200);
    EXPECT_EQ(waitForRequests(log_, marker).size(), 1u);
    std::vector<nlohmann::json> lines = waitForRequests(log_, path);
    EXPECT_EQ(lines.size(), 1u) << "lines for " << path;
    return lines.empty() ? nlohmann::json::object() : lines[0];
  }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<DeadPort> dead_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline std::string log_;
  static inline std::string text_;
  static inline int markers_ = 0;
};

TEST_F(AccessLogTest, EveryRequestGetsOneLineWithItsFacts) {
  constexpr int kRequests = 20;
  std::vector<Response> responses;
  for (int i = 0; i < kRequests; ++i) {
    const std::string method = i % 2 == 0 ? "GET" : "POST";
    responses.push_back(httpRequest(gateway_->port(), method,
                                    "/gateway/echo/each/" + std::to_string(i), {},
                                    method == "POST" ? "body-" + std::to_string(i) : ""));
    ASSERT_EQ(responses.back().status, 200);
  }
  for (int i = 0; i < kRequests; ++i) {
    const std::string path = "/gateway/echo/each/" + std::to_string(i);
    nlohmann::json line = onlyLine(path);
    EXPECT_EQ(line["status"], 200);
    EXPECT_EQ(line["method"], i % 2 == 0 ? "GET" : "POST");
    EXPECT_EQ(line["protocol"], "HTTP/1.1");
    EXPECT_EQ(line["listener"], "edge");
    EXPECT_EQ(line["cluster"], "echo");
    EXPECT_EQ(line["upstream_host"], backend_->address());
    EXPECT_EQ(line["retries"], 0);
    EXPECT_EQ(line["response_flags"], "");
    EXPECT_EQ(line["local_reply_filter"], "");
    EXPECT_EQ(line["tls_version"], "");
    EXPECT_EQ(line["sni"], "");
    EXPECT_EQ(line["bytes_in"], i % 2 == 0 ? 0u : ("body-" + std::to_string(i)).size());
    EXPECT_EQ(line["bytes_out"], responses[i].body.size());
    EXPECT_TRUE(line["upstream_time_ms"].is_number());
    EXPECT_TRUE(line["total_time_ms"].is_number());
    EXPECT_TRUE(std::regex_match(line.value("time", ""), kTime)) << line["time"];
    EXPECT_TRUE(std::regex_match(line.value("request_id", ""), kUuid)) << line["request_id"];
    EXPECT_EQ(line["request_id"], echoHeaderValues(responses[i].body, "X-Request-Id").at(0));
    EXPECT_EQ(line.value("client_address", "").rfind("127.0.0.1:", 0), 0u);
  }
}

TEST_F(AccessLogTest, FormatStringLinesCarryTheSameRequests) {
  ASSERT_EQ(httpGet(gateway_->port(), "/gateway/echo/text-format").status, 200);
  ASSERT_EQ(httpGet(gateway_->port(), "/nowhere/text-format").status, 404);
  auto ok = waitForLines(text_, 1, " /gateway/echo/text-format ");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0], "GET /gateway/echo/text-format 200 - - %");
  auto missing = waitForLines(text_, 1, " /nowhere/text-format ");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0], "GET /nowhere/text-format 404 no_route,local_reply - %");
}

TEST_F(AccessLogTest, NoRouteIs404WithNoRouteFlag) {
  ASSERT_EQ(httpGet(gateway_->port(), "/outside/context").status, 404);
  ASSERT_EQ(httpGet(gateway_->port(), "/gateway/nosuchcluster/x").status, 404);
  for (const char* path : {"/outside/context", "/gateway/nosuchcluster/x"}) {
    nlohmann::json line = onlyLine(path);
    EXPECT_EQ(line["status"], 404);
    EXPECT_TRUE(hasFlag(line, "no_route")) << line;
    EXPECT_TRUE(hasFlag(line, "local_reply")) << line;
    EXPECT_EQ(line["upstream_host"], "");
    EXPECT_TRUE(line["upstream_time_ms"].is_null());
  }
}

TEST_F(AccessLogTest, NoHealthyHostIs503WithItsFlag) {
  ASSERT_EQ(httpGet(gateway_->port(), "/gateway/empty/x").status, 503);
  nlohmann::json line = onlyLine("/gateway/empty/x");
  EXPECT_EQ(line["status"], 503);
  EXPECT_EQ(line["cluster"], "empty");
  EXPECT_TRUE(hasFlag(line, "no_healthy_host")) << line;
  EXPECT_TRUE(hasFlag(line, "local_reply")) << line;
}

TEST_F(AccessLogTest, ConnectFailureIs502WithTheHostTried) {
  ASSERT_EQ(httpGet(gateway_->port(), "/gateway/dead/x").status, 502);
  nlohmann::json line = onlyLine("/gateway/dead/x");
  EXPECT_EQ(line["status"], 502);
  EXPECT_EQ(line["upstream_host"], dead_->address());
  EXPECT_TRUE(hasFlag(line, "upstream_connect_failure")) << line;
  EXPECT_TRUE(line["upstream_time_ms"].is_null());
}

TEST_F(AccessLogTest, CodecRefusalIsLoggedAsBadRequest) {
  // Whitespace before the colon: 400 from the codec, before any stream exists.
  Exchange e = exchange(gateway_->port(),
                        "GET /gateway/echo/bad-header HTTP/1.1\r\nHost: x\r\nBad : y\r\n\r\n");
  ASSERT_EQ(e.response.status, 400);
  nlohmann::json line = onlyLine("/gateway/echo/bad-header");
  EXPECT_EQ(line["status"], 400);
  EXPECT_EQ(line["bytes_out"], e.response.body.size());
  EXPECT_TRUE(hasFlag(line, "bad_request")) << line;
  EXPECT_TRUE(hasFlag(line, "local_reply")) << line;
  EXPECT_EQ(line["upstream_host"], "");
}

TEST_F(AccessLogTest, TooManyHeadersIs431AndLogged) {
  std::string request = "GET /gateway/echo/many-headers HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) request += "X-H" + std::to_string(i) + ": v\r\n";
  Exchange e = exchange(gateway_->port(), request + "\r\n");
  ASSERT_EQ(e.response.status, 431);
  nlohmann::json line = onlyLine("/gateway/echo/many-headers");
  EXPECT_EQ(line["status"], 431);
  EXPECT_TRUE(hasFlag(line, "bad_request")) << line;
}

TEST_F(AccessLogTest, FilterLocalReplyNamesTheFilter) {
  Response r = httpGet(gateway_->port(), "/gateway/echo/denied", {{"X-Deny", "1"}});
  ASSERT_EQ(r.status, 403);
  nlohmann::json line = onlyLine("/gateway/echo/denied");
  EXPECT_EQ(line["status"], 403);
  EXPECT_EQ(line["local_reply_filter"], "deny");
  EXPECT_TRUE(hasFlag(line, "local_reply")) << line;
  EXPECT_EQ(line["upstream_host"], "");
  EXPECT_EQ(line["bytes_out"], r.body.size());
}

TEST_F(AccessLogTest, ClientResetMidBodyIsLogged) {
  {
    uint64_t before = adminStats(gateway_->adminPort())["downstream_rq_total"];
    RawConnection conn(gateway_->port());
    ASSERT_TRUE(conn.connected());
    ASSERT_TRUE(conn.send(
        "POST /gateway/echo/reset HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"));
    // Once sluice has the request head (it counts the request) ...
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (adminStats(gateway_->adminPort())["downstream_rq_total"] <= before &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    conn.close();  // ... go away with 90 body bytes missing.
  }
  nlohmann::json line = onlyLine("/gateway/echo/reset");
  EXPECT_EQ(line["status"], 0);
  EXPECT_TRUE(hasFlag(line, "client_reset")) << line;
  EXPECT_FALSE(hasFlag(line, "local_reply")) << line;
  EXPECT_LE(line.value("bytes_in", 0u), 10u);
}

TEST_F(AccessLogTest, QuotesAndBackslashesInThePathStayOneValidLine) {
  // The codec lets '"' and '\' through in a request-target (control bytes and non-ASCII bytes
  // it refuses; the unit tests cover their escaping).
  const std::string path = "/gateway/echo/\"quoted\"\\back{}";
  Exchange e = exchange(gateway_->port(), "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(e.response.status, 200) << e.response.error;
  nlohmann::json line = onlyLine(path);
  EXPECT_EQ(line["status"], 200);
  auto text = waitForLines(text_, 1, "quoted");
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0], "GET /gateway/echo/\\x22quoted\\x22\\x5cback{} 200 - - %");
}

}  // namespace
}  // namespace sluice::test
