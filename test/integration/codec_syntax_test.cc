// Header-syntax rules, Host rules, HTTP version and size limits enforced by the real binary:
// each refused request gets its status and a closed connection, and never reaches the backend.
#include <string>

#include "test/integration/codec_fixture.h"

namespace sluice::test {
namespace {

using CodecSyntaxTest = CodecTest;

const std::string kGet = "GET /gateway/echo/x HTTP/1.1\r\nHost: a\r\n";

TEST_F(CodecSyntaxTest, WellFormedRequestPassesAndKeepsTheConnection) {
  RawConnection conn(port());
  ASSERT_TRUE(conn.send(kGet + "X-Padded:   value with inner  spaces  \r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.keep_alive);
  // Whitespace is trimmed only around the assembled value.
  EXPECT_EQ(echoHeaderValues(r.body, "X-Padded"),
            std::vector<std::string>{"value with inner  spaces"});
  EXPECT_FALSE(conn.isClosed(200));
}

TEST_F(CodecSyntaxTest, EmptyHeaderValueIsAccepted) {
  for (const char* line : {"X-Empty:\r\n", "X-Empty: \r\n", "X-Empty:\t\r\n"}) {
    Response r = expectAccepted(kGet + line + "Connection: close\r\n\r\n");
    EXPECT_EQ(echoHeaderValues(r.body, "X-Empty"), std::vector<std::string>{""}) << line;
  }
}

TEST_F(CodecSyntaxTest, ObsFoldIs400) {
  expectRejected(kGet + "X-Folded: one\r\n two\r\n\r\n", 400);
  expectRejected(kGet + "X-Folded: one\r\n\ttwo\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, WhitespaceBeforeColonIs400) {
  expectRejected(kGet + "X-Space : v\r\n\r\n", 400);
  expectRejected(kGet + "X-Tab\t: v\r\n\r\n", 400);
  expectRejected("GET /gateway/echo/x HTTP/1.1\r\nHost : a\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, EmptyHeaderNameIs400) { expectRejected(kGet + ": v\r\n\r\n", 400); }

TEST_F(CodecSyntaxTest, NonTokenHeaderNameIs400) {
  expectRejected(kGet + "X(A): v\r\n\r\n", 400);
  expectRejected(kGet + "X\"A: v\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, BareLfIs400) {
  expectRejected("GET /gateway/echo/x HTTP/1.1\nHost: a\n\n", 400);
  expectRejected(kGet + "X-A: b\nX-B: c\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, BareCrIs400) {
  expectRejected(kGet + "X-A: a\rb\r\n\r\n", 400);
  expectRejected(kGet + "X-A: a\rX-B: b\r\n\r\n", 400);
  expectRejected("GET /gateway/echo/x HTTP/1.1\rHost: a\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, NulInHeaderValueIs400) {
  expectRejected(kGet + "X-A: a" + std::string(1, '\0') + "b\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, MissingHostInHttp11Is400) {
  expectRejected("GET /gateway/echo/x HTTP/1.1\r\nX-A: b\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, MissingHostInHttp10Passes) {
  expectAccepted("GET /gateway/echo/x HTTP/1.0\r\n\r\n");
}

TEST_F(CodecSyntaxTest, DuplicateHostIs400) {
  expectRejected(kGet + "Host: b\r\n\r\n", 400);
  expectRejected(kGet + "Host: a\r\n\r\n", 400);
}

TEST_F(CodecSyntaxTest, Http20RequestLineIs505) {
  expectRejected("GET /gateway/echo/x HTTP/2.0\r\nHost: a\r\n\r\n", 505);
}

TEST_F(CodecSyntaxTest, LongUriIs414) {
  std::string path = "/gateway/echo/" + std::string(2 * kMaxRequestLine, 'a');
  expectRejected("GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n", 414);
}

TEST_F(CodecSyntaxTest, UriUnderTheLimitPasses) {
  std::string path = "/gateway/echo/" + std::string(kMaxRequestLine - 100, 'a');
  Response r = expectAccepted("GET " + path + " HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(echoString(r.body, "path"), path.substr(8));
}

TEST_F(CodecSyntaxTest, TooManyHeadersIs431) {
  std::string raw = kGet;
  for (int i = 0; i < kMaxHeaderCount + 5; ++i) raw += "X-H" + std::to_string(i) + ": v\r\n";
  expectRejected(raw + "\r\n", 431);
}

TEST_F(CodecSyntaxTest, HeaderCountAtTheLimitPasses) {
  std::string raw = kGet + "Connection: close\r\n";  // with Host: 2 fields
  for (int i = 0; i < kMaxHeaderCount - 2; ++i) raw += "X-H" + std::to_string(i) + ": v\r\n";
  expectAccepted(raw + "\r\n");
}

TEST_F(CodecSyntaxTest, TooLargeHeaderSectionIs431) {
  expectRejected(kGet + "X-Big: " + std::string(kMaxHeaderBytes + 10, 'v') + "\r\n\r\n", 431);
  std::string many_medium = kGet;
  for (int i = 0; i < 5; ++i)
    many_medium += "X-M" + std::to_string(i) + ": " + std::string(1000, 'm') + "\r\n";
  expectRejected(many_medium + "\r\n", 431);
}

TEST_F(CodecSyntaxTest, HeaderSectionUnderTheLimitPasses) {
  Response r = expectAccepted(
      kGet + "Connection: close\r\nX-Big: " + std::string(kMaxHeaderBytes / 2, 'v') + "\r\n\r\n");
  EXPECT_EQ(echoHeaderValues(r.body, "X-Big").size(), 1u);
}

}  // namespace
}  // namespace sluice::test
