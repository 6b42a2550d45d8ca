// Message semantics through the real binary: bodiless responses (HEAD, 204, 304), HTTP/1.0
// clients, absolute-form targets, Expect: 100-continue, upgrades declined or not switched.
#include <gtest/gtest.h>

#include "test/integration/echo_fixture.h"

namespace sluice::test {
namespace {

using ProxyMessagesTest = EchoFixture;

TEST_F(ProxyMessagesTest, HeadHasNoBodyButKeepsContentLength) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("HEAD", "/gateway/echo/x", {}, "", port())));
  ReadOptions head;
  head.head_request = true;
  Response r = conn.readResponse(head);
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body_length, 0u);
  EXPECT_GT(std::atoi(r.header("Content-Length").c_str()), 0) << "Content-Length dropped";
  EXPECT_EQ(r.header("Transfer-Encoding"), "");
  // No stray body bytes: the next response on the connection parses cleanly.
  ASSERT_TRUE(conn.send(get("/gateway/echo/after-head")));
  expectEchoOf(conn, "/gateway/echo/after-head");
}

TEST_F(ProxyMessagesTest, HeadOfAChunkedResourceHasNoBody) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("HEAD", "/gateway/echo/bytes/5000", {}, "", port())));
  ReadOptions head;
  head.head_request = true;
  Response r = conn.readResponse(head);
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  ASSERT_TRUE(conn.send(get("/gateway/echo/after-head")));
  expectEchoOf(conn, "/gateway/echo/after-head");
}

TEST_F(ProxyMessagesTest, HeadGetsNoBodyOnAGatewayErrorEither) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(buildRequest("HEAD", "/gateway/nosuchcluster/x", {}, "", port())));
  ReadOptions head;
  head.head_request = true;
  Response r = conn.readResponse(head);
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(conn.readAll(), "") << "body bytes after a HEAD response";
}

TEST_F(ProxyMessagesTest, AbsoluteFormTargetIsRoutedByItsPath) {
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send("GET http://api.example.test/gateway/echo/abs?q=1 HTTP/1.1\r\n"
                "Host: api.example.test\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(echoString(r.body, "path"), "/echo/abs?q=1");
}

TEST_F(ProxyMessagesTest, NoContentAndNotModifiedHaveNoBody) {
  RawConnection conn(port());
  for (const char* status : {"204", "304"}) {
    ASSERT_TRUE(conn.send(get(std::string("/gateway/echo/status/") + status)));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << status << ": " << r.error;
    EXPECT_EQ(r.status, std::atoi(status));
    EXPECT_EQ(r.body_length, 0u) << status;
    EXPECT_EQ(r.header("Transfer-Encoding"), "") << status;
    EXPECT_TRUE(r.keep_alive) << status;
  }
  ASSERT_TRUE(conn.send(get("/gateway/echo/after")));
  expectEchoOf(conn, "/gateway/echo/after");
}

TEST_F(ProxyMessagesTest, Http10ClientGetsNoChunkedEncodingAndAClose) {
  // The backend answers sluice (HTTP/1.1) with a chunked body; the 1.0 client must not see it.
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/bytes/100000 HTTP/1.0\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.chunked);
  EXPECT_EQ(r.header("Transfer-Encoding"), "");
  EXPECT_EQ(r.body, patternBytes(0, 100000));
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(ProxyMessagesTest, Http10WithoutKeepAliveIsClosed) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/x HTTP/1.0\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.header("Connection"), "keep-alive");
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(ProxyMessagesTest, Http10KeepAliveGetsConnectionKeepAlive) {
  RawConnection conn(port());
  for (const char* path : {"/gateway/echo/one", "/gateway/echo/two"}) {
    ASSERT_TRUE(
        conn.send(std::string("GET ") + path + " HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << path << ": " << r.error;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.header("Connection"), "keep-alive") << path;
    EXPECT_FALSE(r.chunked);
    EXPECT_EQ(echoString(r.body, "path"), std::string(path).substr(8));
  }
  EXPECT_FALSE(conn.isClosed(200));
}

TEST_F(ProxyMessagesTest, Http10KeepAliveWithAChunkedUpstreamBodyIsClosed) {
  // Without chunking, a 1.0 response of unknown length can only end by closing.
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/bytes/3000 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_FALSE(r.chunked);
  EXPECT_EQ(r.body, patternBytes(0, 3000));
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST_F(ProxyMessagesTest, ExpectContinueGetsInterim100ThenTheFinalResponse) {
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send(buildRequest("POST", "/gateway/echo/upload",
                             {{"Expect", "100-continue"}, {"Content-Length", "11"}}, "", port())));
  Response interim = conn.readResponse();
  ASSERT_TRUE(interim.complete) << interim.error;
  ASSERT_EQ(interim.status, 100);
  ASSERT_TRUE(conn.send("hello world"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(echoNumber(r.body, "body_length"), 11);
  EXPECT_EQ(echoString(r.body, "body_fnv1a"), hex8(fnv1a("hello world")));
  // Exactly one interim response: the connection carries the next request cleanly.
  ASSERT_TRUE(conn.send(get("/gateway/echo/next")));
  expectEchoOf(conn, "/gateway/echo/next");
}

TEST_F(ProxyMessagesTest, WebSocketUpgradeAnsweredWithoutSwitchingIsAPlainResponse) {
  // The upgrade goes upstream (websocket is allowed by default); the echo backend does not
  // switch, so its 200 is an ordinary response and the connection keeps parsing HTTP.
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send(get("/gateway/echo/ws", {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}})));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(echoHeaderValues(r.body, "Upgrade"), std::vector<std::string>{"websocket"}) << r.body;
  EXPECT_EQ(echoHeaderValues(r.body, "Connection"), std::vector<std::string>{"upgrade"}) << r.body;
  ASSERT_TRUE(conn.send(get("/gateway/echo/after")));
  expectEchoOf(conn, "/gateway/echo/after");
}

TEST_F(ProxyMessagesTest, DeclinedUpgradeKeepsTheConnectionUsable) {
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send(get("/gateway/echo/h2c", {{"Connection", "Upgrade, HTTP2-Settings"},
                                          {"Upgrade", "h2c"},
                                          {"HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA"}})));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  ASSERT_TRUE(conn.send(get("/gateway/echo/second")));
  expectEchoOf(conn, "/gateway/echo/second");
}

TEST_F(ProxyMessagesTest, UnsupportedExpectationIs417) {
  Exchange e = exchange(port(), get("/gateway/echo/x", {{"Expect", "something-else"}}));
  EXPECT_TRUE(isJsonError(e.response, 417));
  EXPECT_TRUE(e.closed);
}

TEST_F(ProxyMessagesTest, UnsupportedExpectationHasItsReasonPhrase) {
  Exchange e = exchange(port(), get("/gateway/echo/x", {{"Expect", "something-else"}}));
  EXPECT_EQ(e.response.reason, "Expectation Failed");
  EXPECT_NE(e.response.body.find("Expectation Failed"), std::string::npos) << e.response.body;
}

// A client that sends its request and half-closes (`printf ... | nc -N`, many HTTP/1.0 tools)
// still reads: it gets the response, then the connection closes.
TEST_F(ProxyMessagesTest, HalfClosedClientStillGetsItsResponse) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/delay/100 HTTP/1.0\r\n\r\n"));
  conn.shutdownWrite();
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(conn.isClosed());
}

}  // namespace
}  // namespace sluice::test
