// Connections through the real binary: downstream keep-alive, pipelining (answered in order,
// also past sluice's read watermark), Connection: close, chunked trailers.
#include <gtest/gtest.h>

#include <thread>

#include "test/integration/echo_fixture.h"

namespace sluice::test {
namespace {

using PipeliningTest = EchoFixture;

TEST_F(PipeliningTest, PipelinedRequestsAreAnsweredInOrder) {
  RawConnection conn(port());
  // The first is the slowest: order must still hold.
  ASSERT_TRUE(conn.send(get("/gateway/echo/delay/300") +
                        buildRequest("POST", "/gateway/echo/p2", {}, "payload", port()) +
                        get("/gateway/echo/p3")));
  expectEchoOf(conn, "/gateway/echo/delay/300");
  expectEchoOf(conn, "/gateway/echo/p2");
  expectEchoOf(conn, "/gateway/echo/p3");
  EXPECT_FALSE(conn.isClosed(200));
}

TEST_F(PipeliningTest, PipelinedRequestsEndingWithCloseCloseAfterTheLast) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/a") + get("/gateway/echo/b") +
                        get("/gateway/echo/c", {{"Connection", "close"}})));
  expectEchoOf(conn, "/gateway/echo/a");
  expectEchoOf(conn, "/gateway/echo/b");
  expectEchoOf(conn, "/gateway/echo/c");
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(PipeliningTest, KeepAliveConnectionServesManyRequests) {
  RawConnection conn(port());
  for (int i = 0; i < 200; ++i) {
    std::string path = "/gateway/echo/ka/" + std::to_string(i);
    ASSERT_TRUE(conn.send(get(path))) << i;
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    ASSERT_EQ(r.status, 200);
    ASSERT_TRUE(r.keep_alive) << i;
    ASSERT_EQ(echoString(r.body, "path"), path.substr(8));
  }
  EXPECT_FALSE(conn.isClosed(200));
}

TEST_F(PipeliningTest, ConnectionCloseRequestIsAnsweredThenClosed) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(get("/gateway/echo/bye", {{"Connection", "close"}})));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Connection"), "close");
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(PipeliningTest, ChunkedRequestWithTrailersKeepsTheConnectionInSync) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("POST", "/gateway/echo/t", {{"Transfer-Encoding", "chunked"}},
                                     "3\r\nabc\r\n0\r\nX-Trailer: v\r\n\r\n", port()) +
                        get("/gateway/echo/after")));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(echoNumber(r.body, "body_length"), 3);
  expectEchoOf(conn, "/gateway/echo/after");
}

TEST_F(PipeliningTest, ManyPipelinedRequestsWithBodiesAreAnsweredInOrder) {
  // About 1 MiB of pipelined requests in one go: more than sluice's read watermark.
  constexpr int kRequests = 100;
  std::string batch;
  for (int i = 0; i < kRequests; ++i) {
    batch += buildRequest("POST", "/gateway/echo/pp/" + std::to_string(i), {},
                          std::string(10000 + i, static_cast<char>('a' + i % 26)), port());
  }
  RawConnection conn(port());
  std::thread sender([&] { conn.send(batch); });
  for (int i = 0; i < kRequests; ++i) {
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    ASSERT_EQ(echoString(r.body, "path"), "/echo/pp/" + std::to_string(i));
    ASSERT_EQ(echoNumber(r.body, "body_length"), 10000 + i);
  }
  sender.join();
}

}  // namespace
}  // namespace sluice::test
