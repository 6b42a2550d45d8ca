// Request smuggling and desync shapes, judged by what a recording upstream actually received:
// bytes after a closing or refused request are never parsed as a new request, and bodies are
// never mistaken for requests.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "test/integration/scripted_upstream.h"

namespace sluice::test {
namespace {

const std::string kSmuggled = "GET /gateway/up/smuggled HTTP/1.1\r\nHost: a\r\n\r\n";

class SmugglingTest : public ::testing::Test {
 protected:
  SmugglingTest()
      : s_([](const std::string&, int) { return ScriptedUpstream::Reply{okResponse("ok")}; }) {}
  void SetUp() override { ASSERT_TRUE(s_.gateway.ready()); }

  // Sends `raw` on one connection, reads until sluice closes it, and returns what the
  // upstream received meanwhile (each request head's first line).
  std::vector<std::string> upstreamLinesAfter(const std::string& raw) {
    RawConnection conn(s_.gateway.port(), 3000);
    EXPECT_TRUE(conn.send(raw));
    conn.readAll();
    std::vector<std::string> lines;
    for (const std::string& head : s_.upstream.requests()) {
      lines.push_back(head.substr(0, head.find("\r\n")));
    }
    return lines;
  }

  // True when no request the upstream received mentions "smuggled".
  static bool noneSmuggled(const std::vector<std::string>& lines) {
    for (const std::string& l : lines) {
      if (l.find("smuggled") != std::string::npos) return false;
    }
    return true;
  }

  ScriptedGateway s_;
};

TEST_F(SmugglingTest, NothingAfterConnectionCloseIsForwarded) {
  auto lines = upstreamLinesAfter(s_.get("/gateway/up/a") +
                                  s_.get("/gateway/up/b", {{"Connection", "close"}}) + kSmuggled);
  EXPECT_EQ(lines, (std::vector<std::string>{"GET /up/a HTTP/1.1", "GET /up/b HTTP/1.1"}));
}

TEST_F(SmugglingTest, NothingAfterAnHttp10RequestIsForwarded) {
  auto lines = upstreamLinesAfter("GET /gateway/up/old HTTP/1.0\r\n\r\n" + kSmuggled);
  EXPECT_EQ(lines, std::vector<std::string>{"GET /up/old HTTP/1.1"});
}

TEST_F(SmugglingTest, NothingAfterALocalErrorIsForwarded) {
  EXPECT_TRUE(noneSmuggled(upstreamLinesAfter(s_.get("/gateway/nosuch/x") + kSmuggled)));
  EXPECT_TRUE(noneSmuggled(upstreamLinesAfter(s_.get("/other/x") + kSmuggled)));
}

TEST_F(SmugglingTest, BodyOfARefusedRequestIsNeverParsedAsARequest) {
  // 404: the body is a request in disguise.
  std::string post = "POST /gateway/nosuch/x HTTP/1.1\r\nHost: a\r\nContent-Length: " +
                     std::to_string(kSmuggled.size()) + "\r\n\r\n" + kSmuggled;
  EXPECT_TRUE(noneSmuggled(upstreamLinesAfter(post)));
  // Unsupported expectation (417), with a body behind it.
  std::string expect =
      "POST /gateway/up/x HTTP/1.1\r\nHost: a\r\nExpect: nope\r\nContent-Length: " +
      std::to_string(kSmuggled.size()) + "\r\n\r\n" + kSmuggled;
  EXPECT_TRUE(noneSmuggled(upstreamLinesAfter(expect)));
}

TEST_F(SmugglingTest, ContentLengthAndTransferEncodingDisagreementIsNotForwarded) {
  // The classic CL.TE / TE.CL shapes: whatever a backend would make of them, none reaches it.
  EXPECT_TRUE(upstreamLinesAfter("POST /gateway/up/x HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n"
                                 "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nX" +
                                 kSmuggled)
                  .empty());
  EXPECT_TRUE(upstreamLinesAfter("POST /gateway/up/x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
                                 "Transfer-Encoding: chunked\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n")
                  .empty());
  EXPECT_TRUE(upstreamLinesAfter("POST /gateway/up/x HTTP/1.1\r\nHost: a\r\n"
                                 "Transfer-Encoding: chunked\r\nTransfer-encoding: identity\r\n\r\n"
                                 "0\r\n\r\n" +
                                 kSmuggled)
                  .empty());
}

TEST_F(SmugglingTest, BodyIsForwardedWithExactlyTheDeclaredLength) {
  // A Content-Length body followed by a pipelined request: the upstream gets two requests, the
  // first with exactly its declared body, re-framed by sluice.
  auto lines = upstreamLinesAfter(
      "POST /gateway/up/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
      s_.get("/gateway/up/y", {{"Connection", "close"}}));
  EXPECT_EQ(lines, (std::vector<std::string>{"POST /up/x HTTP/1.1", "GET /up/y HTTP/1.1"}));
  std::vector<std::string> heads = s_.upstream.requests();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_NE(heads[0].find("Content-Length: 5\r\n"), std::string::npos) << heads[0];
}

}  // namespace
}  // namespace sluice::test
