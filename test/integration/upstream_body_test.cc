// Upstream response bodies and connection reuse (DESIGN.md §6): close-delimited bodies
// re-framed, broken bodies never passed off as complete, stray or unsolicited upstream bytes
// never served as a later response, upstream connections reused only when clean.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

TEST(UpstreamBodyTest, BadChunkAfterTheHeadCutsTheClientConnection) {
  // The 200 head has gone to the client already: all sluice can do is close.
  ScriptedGateway s({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\nzz\r\n"});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/a")));
  Response r = conn.readResponse();
  EXPECT_FALSE(r.complete) << "a broken body was passed off as complete";
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST(UpstreamBodyTest, CloseDelimitedBodyIsChunkedForHttp11Clients) {
  ScriptedGateway s(ScriptedUpstream::Reply{"HTTP/1.1 200 OK\r\n\r\nhello world", true});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/a")));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.body, "hello world");
  EXPECT_TRUE(r.chunked);
  EXPECT_TRUE(r.keep_alive);
  ASSERT_TRUE(conn.send(s.get("/gateway/up/b")));
  Response next = conn.readResponse();
  ASSERT_TRUE(next.complete) << next.error;
  EXPECT_EQ(next.body, "fine");
  EXPECT_EQ(s.upstream.connections(), 2);
}

TEST(UpstreamBodyTest, CloseDelimitedBodyToHttp10ClientEndsWithClose) {
  ScriptedGateway s(ScriptedUpstream::Reply{"HTTP/1.1 200 OK\r\n\r\nhello world", true});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send("GET /gateway/up/a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.body, "hello world");
  EXPECT_FALSE(r.chunked);
  EXPECT_TRUE(conn.isClosed(2000));
}

TEST(UpstreamBodyTest, BytesAfterAResponseAreNeverServedToTheNextRequest) {
  ScriptedGateway s({okResponse("first") + "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL"});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  for (const char* expected : {"first", "fine", "fine"}) {
    ASSERT_TRUE(conn.send(s.get("/gateway/up/x")));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.body, expected);
  }
}

// A body of `size` bytes that differs per `seed` and per position (a misplaced or repeated
// piece shows).
std::string patterned(size_t size, int seed) {
  std::string body(size, '\0');
  for (size_t i = 0; i < size; ++i) body[i] = static_cast<char>('a' + (i / 7 + seed) % 26);
  return body;
}

TEST(UpstreamBodyTest, LargeBodiesArriveIntactOverOneReusedConnection) {
  // Large bodies are passed on by moving the upstream's read buffers, small ones copied: every
  // size in between, one connection reused throughout, each body byte for byte.
  const std::vector<size_t> sizes = {16384, 3000, 2047, 2048, 200000, 1, 65536, 16385, 40000};
  ScriptedGateway s([&](const std::string&, int i) {
    return ScriptedUpstream::Reply{okResponse(patterned(sizes[i % sizes.size()], i))};
  });
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  for (int i = 0; i < static_cast<int>(2 * sizes.size()); ++i) {
    ASSERT_TRUE(conn.send(s.get("/gateway/up/" + std::to_string(i))));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.body == patterned(sizes[i % sizes.size()], i)) << i << ": wrong body";
  }
  EXPECT_EQ(s.upstream.connections(), 1);
}

TEST(UpstreamBodyTest, BytesAfterALargeResponseAreNeverServedToTheNextRequest) {
  // The stray response follows the large body in the same write (and read).
  const std::string big = patterned(20000, 3);
  ScriptedGateway s({okResponse(big) + "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL"});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  for (const std::string& expected : {big, std::string("fine"), std::string("fine")}) {
    ASSERT_TRUE(conn.send(s.get("/gateway/up/x")));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_TRUE(r.body == expected) << "got " << r.body.size() << " bytes";
  }
}

TEST(UpstreamBodyTest, UnsolicitedBytesOnAnIdleConnectionAreNeverServed) {
  ScriptedGateway s(ScriptedUpstream::Reply{
      okResponse("first"), false, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nEVIL", 100});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/x")));
  EXPECT_EQ(conn.readResponse().body, "first");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  ASSERT_TRUE(conn.send(s.get("/gateway/up/y")));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.body, "fine");
}

TEST(UpstreamBodyTest, UpstreamClosingKeepAliveConnectionsDoesNotFailGets) {
  // Every response claims keep-alive, then the upstream closes: sluice must notice (or retry
  // the GET on a fresh connection), never answer 502.
  ScriptedGateway s([](const std::string&, int) {
    return ScriptedUpstream::Reply{okResponse("ok"), true};
  });
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(conn.send(s.get("/gateway/up/" + std::to_string(i))));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    EXPECT_EQ(r.status, 200) << i << ": " << r.body;
  }
}

TEST(UpstreamBodyTest, HeadResponseKeepsContentLengthAndTheConnection) {
  ScriptedGateway s([](const std::string&, int) {
    return ScriptedUpstream::Reply{"HTTP/1.1 200 OK\r\nContent-Length: 12345\r\n\r\n"};
  });
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ReadOptions head;
  head.head_request = true;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(conn.send(buildRequest("HEAD", "/gateway/up/h", {}, "", 1)));
    Response r = conn.readResponse(head);
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.header("Content-Length"), "12345");
  }
  EXPECT_EQ(s.upstream.connections(), 1) << "HEAD responses left the upstream unusable";
}

TEST(UpstreamBodyTest, StallMidBodyCutsTheClientAfterTheResponseTimeout) {
  // Head and 3 of 10 body bytes, then silence (the connection stays open).
  ScriptedGateway s(
      ScriptedUpstream::Reply{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false, "", 0});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port(), 10000);
  ASSERT_TRUE(conn.send(s.get("/gateway/up/x")));
  Response r = conn.readResponse();
  EXPECT_FALSE(r.complete) << "a truncated body was passed off as complete";
  EXPECT_NE(r.error, "timeout") << "sluice never gave up on the stalled upstream";
  EXPECT_EQ(r.status, 200);
}

TEST(UpstreamBodyTest, AbandonedDownloadIsNotReused) {
  // The client goes away after a few KiB of a 20 MiB body: that upstream connection still has
  // unread body and must not be pooled.
  ScriptedGateway s(ScriptedUpstream::Reply{okResponse(std::string(20 << 20, 'x'))});
  ASSERT_TRUE(s.gateway.ready());
  {
    RawConnection conn(s.gateway.port());
    ASSERT_TRUE(conn.send(s.get("/gateway/up/big")));
    ReadOptions options;
    size_t got = 0;
    options.on_body = [&](std::string_view piece) {
      got += piece.size();
      if (got > 4096) conn.close();
    };
    conn.readResponse(options);
  }
  for (int i = 0; i < 3; ++i) {
    Response r = httpGet(s.gateway.port(), "/gateway/up/next");
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.body, "fine");
  }
  EXPECT_GE(s.upstream.connections(), 2);
}

TEST(UpstreamBodyTest, BodySentToAHeadRequestIsNeverServedLater) {
  // A broken upstream answers HEAD with a body; those bytes must not become the next response.
  ScriptedGateway s([](const std::string& head, int) {
    if (head.rfind("HEAD", 0) == 0) return ScriptedUpstream::Reply{okResponse("EVIL")};
    return ScriptedUpstream::Reply{okResponse("fine")};
  });
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ReadOptions head;
  head.head_request = true;
  ASSERT_TRUE(conn.send(buildRequest("HEAD", "/gateway/up/h", {}, "", 1)));
  Response r = conn.readResponse(head);
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.header("Content-Length"), "4");
  ASSERT_TRUE(conn.send(s.get("/gateway/up/g")));
  Response next = conn.readResponse();
  ASSERT_TRUE(next.complete) << next.error;
  EXPECT_EQ(next.body, "fine");
}

TEST(UpstreamBodyTest, ClientGivingUpDiscardsThatUpstreamConnection) {
  // The answer to /slow comes late, after its client left: it must never reach a later request.
  ScriptedGateway s([](const std::string& head, int) {
    bool slow = head.find(" /up/slow ") != std::string::npos;
    if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    return ScriptedUpstream::Reply{okResponse(slow ? "late" : "fine")};
  });
  ASSERT_TRUE(s.gateway.ready());
  {
    RawConnection quitter(s.gateway.port());
    ASSERT_TRUE(quitter.send(s.get("/gateway/up/slow")));
    for (int i = 0; i < 500 && s.upstream.requests().empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(s.upstream.requests().size(), 1u);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the late answer is sent
  for (int i = 0; i < 3; ++i) {
    Response r = httpGet(s.gateway.port(), "/gateway/up/next");
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.body, "fine");
  }
}

TEST(UpstreamBodyTest, NotModifiedKeepsItsContentLengthWithoutABody) {
  ScriptedGateway s([](const std::string&, int) {
    return ScriptedUpstream::Reply{
        "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 1234\r\n\r\n"};
  });
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(conn.send(s.get("/gateway/up/cached", {{"If-None-Match", "\"v1\""}})));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 304);
    EXPECT_EQ(r.header("ETag"), "\"v1\"");
    EXPECT_EQ(r.header("Content-Length"), "1234");
    EXPECT_EQ(r.body_length, 0u);
  }
  EXPECT_EQ(s.upstream.connections(), 1);
}

TEST(UpstreamBodyTest, NoContentWithAContentLengthIsNotWaitedFor) {
  ScriptedGateway s(
      ScriptedUpstream::Reply{"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/x")));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.headerCount("Content-Length"), 0u);
}

TEST(UpstreamBodyTest, NoContentNeverCarriesFraming) {
  ScriptedGateway s(
      ScriptedUpstream::Reply{"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/x")));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.headerCount("Content-Length"), 0u);
  EXPECT_EQ(r.headerCount("Transfer-Encoding"), 0u);
  ASSERT_TRUE(conn.send(s.get("/gateway/up/y")));
  EXPECT_EQ(conn.readResponse().body, "fine");
}

TEST(UpstreamBodyTest, BytesAfterAClosingResponseDoNotCutIt) {
  ScriptedGateway s(
      ScriptedUpstream::Reply{okResponse("first", "Connection: close\r\n") + "GARBAGE", true});
  ASSERT_TRUE(s.gateway.ready());
  RawConnection conn(s.gateway.port());
  ASSERT_TRUE(conn.send(s.get("/gateway/up/x")));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.body, "first");
  ASSERT_TRUE(conn.send(s.get("/gateway/up/y")));
  Response next = conn.readResponse();
  ASSERT_TRUE(next.complete) << next.error;
  EXPECT_EQ(next.body, "fine");
}

}  // namespace
}  // namespace sluice::test
