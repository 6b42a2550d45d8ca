// Tests of the harness itself, against the real echo backend.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

#include "test/harness/harness.h"

namespace sluice::test {
namespace {

// The "client" field of an echo body: which connection the request came on.
std::string clientOf(const std::string& body) {
  size_t at = body.find("\"client\": \"");
  return at == std::string::npos ? "" : body.substr(at + 11, body.find('"', at + 11) - at - 11);
}

TEST(HarnessTest, FreePortIsBindable) {
  int port = freePort();
  EXPECT_GT(port, 0);
  EXPECT_FALSE(RawConnection(port, 1000).connected());
}

TEST(HarnessTest, RunfileFindsEchoBackend) {
  EXPECT_EQ(readFile(runfile("tools/echo_backend/echo_backend")).empty(), false);
  EXPECT_EQ(runfile("/bin/sh"), "/bin/sh");
}

TEST(HarnessTest, TempConfigAndSubstitute) {
  TempConfig config(substitute("port: ${PORT}\nname: ${NAME}\nkeep: ${OTHER}\n",
                               {{"PORT", "8080"}, {"NAME", "edge"}}));
  EXPECT_EQ(readFile(config.path()), "port: 8080\nname: edge\nkeep: ${OTHER}\n");
  EXPECT_TRUE(config.rewrite("x: 1\n"));
  EXPECT_EQ(readFile(config.path()), "x: 1\n");
}

TEST(HarnessTest, ProcessExitCodesOutputAndSignals) {
  Process exits({"/bin/sh", "-c", "echo hello $GREETING; echo oops >&2; exit 3"},
                {{"GREETING", "world"}});
  EXPECT_EQ(exits.waitExit(5000), 3);
  EXPECT_TRUE(exits.waitForOutput("hello world", 0));
  EXPECT_NE(exits.output().find("oops"), std::string::npos);

  Process sleeper({"sleep", "30"});
  EXPECT_TRUE(sleeper.running());
  EXPECT_EQ(sleeper.waitExit(50), -1);
  EXPECT_TRUE(sleeper.signal(SIGTERM));
  EXPECT_EQ(sleeper.waitExit(5000), 128 + SIGTERM);
  EXPECT_FALSE(sleeper.waitForOutput("never", 100));

  Process missing({"/nonexistent/binary"});
  EXPECT_EQ(missing.waitExit(5000), 127);
  EXPECT_TRUE(missing.waitForOutput("exec failed", 0));
}

// A child's sanitizer report fails the test that ran it (sanitizer builds set halt_on_error, but
// a report at exit, or from a child the test never checks, would go unseen).
TEST(HarnessTest, SanitizerReportInAChildFailsTheTest) {
  EXPECT_NONFATAL_FAILURE(
      {
        Process p({"/bin/sh", "-c", "echo '==1==WARNING: ThreadSanitizer: data race (pid=1)'"});
        p.waitExit(5000);
      },
      "WARNING: ThreadSanitizer: data race");
  EXPECT_NONFATAL_FAILURE(
      {
        Process p({"/bin/sh", "-c", "echo 'a.cc:3:5: runtime error: signed integer overflow'"});
        p.waitExit(5000);
      },
      "runtime error: signed integer overflow");
  Process clean({"/bin/sh", "-c", "echo all fine"});
  EXPECT_EQ(clean.waitExit(5000), 0);
}

TEST(HarnessTest, ProcessDestructorKillsTheGroup) {
  int port = freePort();
  pid_t child = 0;
  {
    Process shell({"/bin/sh", "-c", "sleep 30 & echo child $!; wait"});
    ASSERT_TRUE(shell.waitForOutput("child ", 5000));
    child = std::atoi(shell.output().substr(shell.output().find("child ") + 6).c_str());
    ASSERT_GT(child, 0);
    EXPECT_FALSE(shell.waitForPort(port, 50));
  }
  // The grandchild was in the group and got SIGKILL; it is reaped by init soon after.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ::kill(child, 0) != 0;
    if (!gone) usleep(10000);
  }
  EXPECT_TRUE(gone);
}

TEST(HarnessTest, EchoGetAnswersWithNameMethodPathAndHeaders) {
  EchoBackend backend("alpha");
  ASSERT_GT(backend.port(), 0);
  EXPECT_TRUE(backend.process().waitForPort(backend.port(), 1000));
  Response r = httpGet(backend.port(), "/hello/world?x=1", {{"X-Test", "yes"}});
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.reason, "OK");
  EXPECT_EQ(r.header("x-backend"), "alpha");
  EXPECT_EQ(r.headerCount("X-Backend"), 1u);
  EXPECT_EQ(r.body_length, r.body.size());
  EXPECT_NE(r.body.find("\"backend\": \"alpha\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"method\": \"GET\""), std::string::npos);
  EXPECT_NE(r.body.find("\"path\": \"/hello/world?x=1\""), std::string::npos);
  EXPECT_NE(r.body.find("\"X-Test: yes\""), std::string::npos);
  EXPECT_FALSE(r.keep_alive);  // we asked for Connection: close

  Response head = httpRequest(backend.port(), "HEAD", "/x");
  ASSERT_TRUE(head.complete) << head.error;
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_NE(head.header("Content-Length"), "0");
}

TEST(HarnessTest, KeepAliveAndPipelining) {
  EchoBackend backend("beta");
  RawConnection conn(backend.port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/one", {}, "", backend.port())));
  Response first = conn.readResponse();
  ASSERT_TRUE(first.complete) << first.error;
  EXPECT_TRUE(first.keep_alive);
  ASSERT_TRUE(conn.send(buildRequest("GET", "/two", {}, "", backend.port())));
  Response second = conn.readResponse();
  ASSERT_TRUE(second.complete) << second.error;
  EXPECT_EQ(clientOf(first.body), clientOf(second.body));  // same connection
  EXPECT_NE(second.body.find("/two"), std::string::npos);

  // Three pipelined requests, the last one closing; answered in order.
  ASSERT_TRUE(conn.send(buildRequest("GET", "/p1", {}, "", 1) +
                        buildRequest("POST", "/p2", {}, "data", 1) +
                        buildRequest("GET", "/p3", {{"Connection", "close"}}, "", 1)));
  for (const char* path : {"/p1", "/p2", "/p3"}) {
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << path << ": " << r.error;
    EXPECT_NE(r.body.find(std::string("\"path\": \"") + path + "\""), std::string::npos);
  }
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST(HarnessTest, StatusDelayAndDrop) {
  EchoBackend backend("gamma");
  Response r = httpGet(backend.port(), "/gateway/demo/status/503");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.header("X-Backend"), "gamma");
  EXPECT_EQ(httpGet(backend.port(), "/status/204").body_length, 0u);

  auto start = std::chrono::steady_clock::now();
  Response delayed = httpGet(backend.port(), "/delay/200");
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(delayed.complete) << delayed.error;
  EXPECT_EQ(delayed.status, 200);
  EXPECT_GE(waited, std::chrono::milliseconds(190));  // a lower bound only: timers never fire early

  RawConnection conn(backend.port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/drop", {}, "", backend.port())));
  Response dropped = conn.readResponse();
  EXPECT_FALSE(dropped.complete);
  EXPECT_EQ(dropped.status, 0);
  EXPECT_TRUE(conn.isClosed(0));
}

TEST(HarnessTest, ChunkedDownloadStreams) {
  EchoBackend backend("delta");
  constexpr uint64_t kSize = 10000000;
  RawConnection conn(backend.port());
  ASSERT_TRUE(conn.send(buildRequest("GET", "/bytes/" + std::to_string(kSize), {}, "", 1)));
  uint32_t hash = fnv1a("");
  uint64_t offset = 0;
  bool pattern_ok = true;
  ReadOptions options;
  options.on_body = [&](std::string_view piece) {
    pattern_ok = pattern_ok && piece == patternBytes(offset, piece.size());
    hash = fnv1a(piece, hash);
    offset += piece.size();
  };
  Response r = conn.readResponse(options);
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_TRUE(r.chunked);
  EXPECT_EQ(r.body_length, kSize);
  EXPECT_TRUE(r.body.empty());
  EXPECT_TRUE(pattern_ok);
  EXPECT_EQ(hash, fnv1a(patternBytes(0, kSize)));

  Response framed = httpGet(backend.port(), "/bytes/1000?framing=length");
  EXPECT_FALSE(framed.chunked);
  EXPECT_EQ(framed.header("Content-Length"), "1000");
  EXPECT_EQ(framed.body, patternBytes(0, 1000));
}

TEST(HarnessTest, StreamedUploadIsCountedAndHashed) {
  EchoBackend backend("epsilon");
  constexpr uint64_t kSize = 50ull << 20;
  constexpr size_t kPiece = 1 << 20;
  RawConnection conn(backend.port());
  ASSERT_TRUE(conn.send(buildRequest("POST", "/upload", {{"Content-Length", std::to_string(kSize)}},
                                     "", backend.port())));
  uint32_t hash = fnv1a("");
  for (uint64_t sent = 0; sent < kSize; sent += kPiece) {
    std::string piece = patternBytes(sent, kPiece);
    hash = fnv1a(piece, hash);
    ASSERT_TRUE(conn.send(piece));
  }
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_NE(r.body.find("\"body_length\": " + std::to_string(kSize)), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"body_fnv1a\": \"" + hex8(hash) + "\""), std::string::npos) << r.body;

  // Chunked upload with Expect: 100-continue: the interim response comes first.
  ASSERT_TRUE(conn.send(buildRequest(
      "PUT", "/upload", {{"Transfer-Encoding", "chunked"}, {"Expect", "100-continue"}}, "", 1)));
  Response interim = conn.readResponse();
  EXPECT_EQ(interim.status, 100);
  ASSERT_TRUE(conn.send("5\r\nhello\r\n0\r\n\r\n"));
  Response final_response = conn.readResponse();
  EXPECT_EQ(final_response.status, 200);
  EXPECT_NE(final_response.body.find("\"body_fnv1a\": \"" + hex8(fnv1a("hello")) + "\""),
            std::string::npos);
}

TEST(HarnessTest, MalformedRequestGets400AndClose) {
  EchoBackend backend("zeta");
  RawConnection conn(backend.port());
  ASSERT_TRUE(conn.send("GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n"));
  Response r = conn.readResponse();
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(conn.isClosed(2000));
}

}  // namespace
}  // namespace sluice::test
