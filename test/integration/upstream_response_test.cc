// How sluice treats what an upstream sends back (DESIGN.md §6): hop-by-hop response headers
// stripped, malformed responses turned into 502 and never reused, 1xx forwarded to HTTP/1.1
// clients, close-delimited bodies re-framed, stray bytes never served as a later response.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "test/integration/gateway.h"
#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

TEST(UpstreamResponseTest, HopByHopResponseHeadersAreStripped) {
  ScriptedGateway s({okResponse("ok",
                                "Connection: X-Secret, close\r\nKeep-Alive: timeout=5\r\n"
                                "X-Secret: s\r\nProxy-Connection: keep-alive\r\nUpgrade: h2c\r\n"
                                "Trailer: X-T\r\nX-Kept: k\r\n")});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/a")));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  EXPECT_EQ(r.header("X-Kept"), "k");
  for (const char* name : {"X-Secret", "Keep-Alive", "Proxy-Connection", "Upgrade", "Trailer"}) {
    EXPECT_EQ(r.headerCount(name), 0u) << name << " reached the client";
  }
  // The upstream's "Connection: close" is about its own connection, not the client's.
  EXPECT_EQ(r.headerCount("Connection"), 0u);
  EXPECT_TRUE(r.keep_alive);
  ASSERT_TRUE(conn.send(s.get("/gateway/up/b")));
  Response next = conn.readResponse();
  ASSERT_TRUE(next.complete) << next.error;
  EXPECT_EQ(next.body, "fine");
  EXPECT_EQ(s.upstream.connections(), 2) << "an upstream connection marked close was reused";
}

// One malformed upstream response: the client gets 502 JSON, and the next request goes over a
// new upstream connection.
void expectBadResponseIs502(const std::string& bad) {
  ScriptedGateway s({bad});
  ASSERT_TRUE(s.gateway.ready());
  Response r = httpGet(s.gateway.port(), "/gateway/up/bad");
  EXPECT_TRUE(isJsonError(r, 502)) << "upstream sent:\n" << bad;
  Response next = httpGet(s.gateway.port(), "/gateway/up/next");
  ASSERT_TRUE(next.complete) << next.error;
  EXPECT_EQ(next.body, "fine") << "upstream sent:\n" << bad;
  EXPECT_EQ(s.upstream.connections(), 2) << "connection reused after:\n" << bad;
}

TEST(UpstreamResponseTest, ContentLengthWithTransferEncodingIs502) {
  expectBadResponseIs502(
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
}

TEST(UpstreamResponseTest, ConflictingContentLengthsAre502) {
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!");
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok");
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok");
}

TEST(UpstreamResponseTest, TransferEncodingOtherThanChunkedIs502) {
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
  expectBadResponseIs502(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
      "chunked\r\n\r\n0\r\n\r\n");
}

TEST(UpstreamResponseTest, HeaderSyntaxErrorsAre502) {
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok");
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nX-A : a\r\nContent-Length: 2\r\n\r\nok");
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nX-A: a" + std::string(1, '\0') +
                         "b\r\nContent-Length: 2\r\n\r\nok");
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nok");
  expectBadResponseIs502("HTTP/1.1 200 OK\nContent-Length: 2\n\nok");
}

TEST(UpstreamResponseTest, BadStatusLinesAre502) {
  expectBadResponseIs502("HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nok");
  expectBadResponseIs502("HTPT/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  expectBadResponseIs502("HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
}

TEST(UpstreamResponseTest, HugeResponseHeaderSectionIs502) {
  expectBadResponseIs502("HTTP/1.1 200 OK\r\nX-Huge: " + std::string(300 * 1024, 'h') +
                         "\r\nContent-Length: 2\r\n\r\nok");
}

TEST(UpstreamResponseTest, InterimResponsesAreForwardedToHttp11Clients) {
  ScriptedGateway s(
      {"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" + okResponse("final")});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/a")));
  Response interim = conn.readResponse();
  ASSERT_TRUE(interim.complete) << interim.error;
  EXPECT_EQ(interim.status, 103);
  EXPECT_EQ(interim.header("Link"), "</s.css>; rel=preload");
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "final");
}

TEST(UpstreamResponseTest, InterimResponsesAreNotSentToHttp10Clients) {
  ScriptedGateway s({"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n" + okResponse("final")});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send("GET /gateway/up/a HTTP/1.0\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "final");
}

TEST(UpstreamResponseTest, SwitchingProtocolsToAPlainRequestIs502) {
  // The request asked for no upgrade (RFC 9110 §15.2.2): a 101 comes from a broken upstream.
  expectBadResponseIs502(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n");
}

TEST(UpstreamResponseTest, UpstreamErrorStatusesPassThroughWithTheirBodies) {
  ScriptedGateway s(ScriptedUpstream::Reply{
      "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nbusy"});
  ASSERT_TRUE(s.gateway.ready());
  Response r = httpGet(s.gateway.port(), "/gateway/up/x");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.reason, "Service Unavailable");
  EXPECT_EQ(r.header("Retry-After"), "7");
  EXPECT_EQ(r.body, "busy");
}

TEST(UpstreamResponseTest, EmptyResponseHeaderValueIsAccepted) {
  ScriptedGateway s(ScriptedUpstream::Reply{okResponse("ok", "X-Empty:\r\n")});
  ASSERT_TRUE(s.gateway.ready());
  Response r = httpGet(s.gateway.port(), "/gateway/up/x");
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "ok");
  EXPECT_EQ(r.headerCount("X-Empty"), 1u);
}

TEST(UpstreamResponseTest, TooManyResponseHeaderFieldsAre502) {
  std::string fields;
  for (int i = 0; i < 1000; ++i) fields += "X-F" + std::to_string(i) + ": v\r\n";
  expectBadResponseIs502("HTTP/1.1 200 OK\r\n" + fields + "Content-Length: 2\r\n\r\nok");
}

TEST(UpstreamResponseTest, ChunkedResponseWithExtensionsAndTrailersIsRelayedAndReused) {
  ScriptedGateway s([](const std::string&, int) {
    return ScriptedUpstream::Reply{
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "2;ext=1\r\nok\r\n3\r\n!!!\r\n0\r\nX-Trailer: t\r\n\r\n"};
  });
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(conn.send(s.get("/gateway/up/c")));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.body, "ok!!!");
    EXPECT_TRUE(r.chunked);
  }
  EXPECT_EQ(s.upstream.connections(), 1);
}

}  // namespace
}  // namespace sluice::test
