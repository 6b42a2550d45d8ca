// A response a filter buffered whole is handed to the client's connection in one piece, many
// megabytes at once. The stream ends when the client has taken it, as a streamed response's
// does: the access log says client_reset (with the bytes that really left) for a client that
// goes away mid-way, the full size for one that reads it all, and a pipelined request after it
// is answered after it; a client that stops reading (also after its FIN, or on a response that
// closes the connection, when sluice reads no more) is cut after idle_timeout_ms, not kept with
// megabytes of output. Uses the `probe` test filter (test/integration/fixtures/probe.cc).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "test/integration/access_log_util.h"
#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
limits:
  idle_timeout_ms: 1000
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - {name: probe, path: '${PROBE}'}
    access_log:
      - path: ${LOG}
routes:
  - prefix: /api/
    cluster: echo
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";

// 32 MB: far more than loopback's socket buffers take (at most ~10 MB with autotuning: tcp_wmem
// 4 MiB + tcp_rmem 6 MiB by default), so most of it is still in sluice's output when the client
// stops.
constexpr uint64_t kBodyBytes = 32'000'000;

std::string bufferedGet(const std::string& path, const std::string& extra = "") {
  return "GET " + path +
         " HTTP/1.1\r\nHost: x\r\nX-Probe-Buffer-Response: 67108864\r\n"
         "X-Probe-Keep-Response: 1\r\n" +
         extra + "\r\n";
}

int BufferedResponseTestPort();

class BufferedResponseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    log_ = uniqueTmpPath("buffered.json");
    gateway_ = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{
                     {"BACKEND", backend_->address()},
                     {"LOG", log_},
                     {"PROBE", runfile("test/integration/fixtures/libprobe.so")}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

 public:
  static int port() { return gateway_->port(); }

 protected:
  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline std::string log_;
};

int BufferedResponseTestPort() { return BufferedResponseTest::port(); }

TEST_F(BufferedResponseTest, AClientThatResetsMidWayIsLoggedAsSuch) {
  const std::string path = "/api/bytes/" + std::to_string(kBodyBytes) + "?reset";
  {
    RawConnection conn(gateway_->port());
    ASSERT_TRUE(conn.connected());
    ASSERT_TRUE(conn.send(bufferedGet(path)));
    std::string first = conn.readBytes(100 * 1024);
    ASSERT_EQ(first.size(), 100u * 1024) << "the response did not start";
    ASSERT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first.substr(0, 200);
    conn.close();  // unread bytes in the receive buffer: the kernel answers with a reset
  }
  std::vector<nlohmann::json> lines = waitForRequests(log_, path);
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::json& line = lines[0];
  EXPECT_TRUE(hasFlag(line, "client_reset")) << line;
  // What left sluice: at most what the socket buffers held, well short of the body.
  EXPECT_LT(line.value("bytes_out", kBodyBytes), kBodyBytes / 2) << line;
}

TEST_F(BufferedResponseTest, AClientThatReadsItAllIsLoggedWithTheWholeBodyAndKeepsItsConnection) {
  const std::string path = "/api/bytes/" + std::to_string(kBodyBytes) + "?whole";
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.connected());
  // Two requests at once: the second is answered after the first one's 32 MB.
  ASSERT_TRUE(conn.send(bufferedGet(path) + "GET /api/next HTTP/1.1\r\nHost: x\r\n\r\n"));
  Response big = conn.readResponse();
  ASSERT_EQ(big.status, 200) << big.error;
  EXPECT_EQ(big.body.size(), kBodyBytes);
  Response next = conn.readResponse();
  ASSERT_EQ(next.status, 200) << next.error;
  EXPECT_NE(next.body.find("\"path\": \"/api/next\""), std::string::npos) << next.body;
  std::vector<nlohmann::json> lines = waitForRequests(log_, path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].value("bytes_out", 0u), kBodyBytes) << lines[0];
  EXPECT_TRUE(flagsOf(lines[0]).empty()) << lines[0];
  EXPECT_EQ(lines[0]["status"], 200);
}

// Sends a buffered GET, reads the first 100 KB, then reads nothing more: sluice must cut the
// connection within a few idle timeouts and log downstream_timeout with what really left.
void expectCutWhenTheClientStopsReading(const std::string& path, const std::string& extra,
                                        bool half_close, const std::string& log) {
  RawConnection conn(BufferedResponseTestPort(), 20000);
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.send(bufferedGet(path, extra)));
  if (half_close) conn.shutdownWrite();
  ASSERT_EQ(conn.readBytes(100 * 1024).size(), 100u * 1024);
  // Read nothing for a while: the socket buffers fill and sluice's output stops moving.
  auto begin = std::chrono::steady_clock::now();
  std::vector<nlohmann::json> lines = waitForRequests(log, path);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ASSERT_EQ(lines.size(), 1u) << "no log line: the connection was kept";
  EXPECT_TRUE(hasFlag(lines[0], "downstream_timeout")) << lines[0];
  EXPECT_LT(lines[0].value("bytes_out", kBodyBytes), kBodyBytes / 2) << lines[0];
  EXPECT_LT(waited_s, 8.0);
  EXPECT_TRUE(conn.isClosed(5000)) << "the connection is still open";
}

TEST_F(BufferedResponseTest, AClientThatStopsReadingIsCutAfterTheIdleTimeout) {
  expectCutWhenTheClientStopsReading("/api/bytes/" + std::to_string(kBodyBytes) + "?stall", "",
                                     false, log_);
}

TEST_F(BufferedResponseTest, AClientThatHalfClosedAndStopsReadingIsCutToo) {
  // After the FIN sluice reads no more, so only the output can tell.
  expectCutWhenTheClientStopsReading("/api/bytes/" + std::to_string(kBodyBytes) + "?fin", "", true,
                                     log_);
}

TEST_F(BufferedResponseTest, AClosingResponseWhoseClientStopsReadingIsCutToo) {
  expectCutWhenTheClientStopsReading("/api/bytes/" + std::to_string(kBodyBytes) + "?close",
                                     "Connection: close\r\n", false, log_);
}

}  // namespace
}  // namespace sluice::test
