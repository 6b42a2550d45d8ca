// Message-framing rules (request smuggling shapes and body limits) enforced by the real binary:
// each refused request gets its status and a closed connection, and never reaches the backend.
#include <string>

#include "test/integration/codec_fixture.h"

namespace sluice::test {
namespace {

using CodecFramingTest = CodecTest;

const std::string kPost = "POST /gateway/echo/x HTTP/1.1\r\nHost: a\r\n";

TEST_F(CodecFramingTest, ValidContentLengthAndChunkedBodiesPass) {
  Response cl = expectAccepted(kPost + "Content-Length: 5\r\nConnection: close\r\n\r\nhello");
  EXPECT_EQ(echoNumber(cl.body, "body_length"), 5);
  EXPECT_EQ(echoString(cl.body, "body_fnv1a"), hex8(fnv1a("hello")));

  Response chunked = expectAccepted(kPost +
                                    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                                    "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n");
  EXPECT_EQ(echoNumber(chunked.body, "body_length"), 11);
  EXPECT_EQ(echoString(chunked.body, "body_fnv1a"), hex8(fnv1a("hello world")));
}

TEST_F(CodecFramingTest, ContentLengthWithTransferEncodingIs400) {
  expectRejected(kPost + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
  expectRejected(kPost + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400);
}

TEST_F(CodecFramingTest, TransferEncodingGzipChunkedIs400) {
  expectRejected(kPost + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400);
}

TEST_F(CodecFramingTest, TransferEncodingChunkedTwiceAsTwoFieldsIs400) {
  expectRejected(
      kPost + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
}

TEST_F(CodecFramingTest, TransferEncodingChunkedChunkedInOneFieldIs400) {
  expectRejected(kPost + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400);
}

TEST_F(CodecFramingTest, TransferEncodingXchunkedIs400) {
  expectRejected(kPost + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", 400);
}

TEST_F(CodecFramingTest, TransferEncodingIdentityIs400) {
  expectRejected(kPost + "Transfer-Encoding: identity\r\nContent-Length: 0\r\n\r\n", 400);
}

TEST_F(CodecFramingTest, TransferEncodingInHttp10Is400) {
  expectRejected(
      "POST /gateway/echo/x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      400);
}

TEST_F(CodecFramingTest, DuplicateContentLengthIs400) {
  expectRejected(kPost + "Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400);
  expectRejected(kPost + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400);
}

TEST_F(CodecFramingTest, ContentLengthWithCommaListIs400) {
  expectRejected(kPost + "Content-Length: 5, 5\r\n\r\nhello", 400);
  expectRejected(kPost + "Content-Length: 5,5\r\n\r\nhello", 400);
}

TEST_F(CodecFramingTest, NegativeOrNonNumericContentLengthIs400) {
  expectRejected(kPost + "Content-Length: -1\r\n\r\n", 400);
  expectRejected(kPost + "Content-Length: +5\r\n\r\nhello", 400);
  expectRejected(kPost + "Content-Length: 5x\r\n\r\nhello", 400);
  expectRejected(kPost + "Content-Length: 99999999999999999999999\r\n\r\n", 400);
}

// Once a chunked request's headers are accepted it is on its way upstream, so a bad chunk is
// seen mid-body: DESIGN.md §6 still wants 400 + close.
TEST_F(CodecFramingTest, BadChunkSizeIs400) {
  expectRejected(kPost + "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400, false);
  expectRejected(kPost + "Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", 400, false);
  expectRejected(
      kPost + "Transfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\nhello\r\n0\r\n\r\n", 400,
      false);
}

TEST_F(CodecFramingTest, ChunkDataLongerThanDeclaredIs400) {
  expectRejected(kPost + "Transfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n", 400, false);
}

// A request smuggled behind a bad chunk is never answered.
TEST_F(CodecFramingTest, RequestSmuggledBehindABadChunkIsNeverServed) {
  for (const std::string body : {"zz\r\nhello\r\n0\r\n\r\n", "3\r\nhello\r\n0\r\n\r\n"}) {
    Exchange e = exchange(port(), kPost + "Transfer-Encoding: chunked\r\n\r\n" + body +
                                      "GET /gateway/echo/smuggled HTTP/1.1\r\nHost: a\r\n\r\n");
    EXPECT_TRUE(e.closed);
    EXPECT_NE(e.response.status, 200) << e.response.body;
    EXPECT_EQ(e.response.body.find("smuggled"), std::string::npos);
  }
}

TEST_F(CodecFramingTest, ContentLengthOverLimitIs413) {
  expectRejected(kPost + "Content-Length: " + std::to_string(kMaxBody + 1) + "\r\n\r\n", 413);
}

TEST_F(CodecFramingTest, ContentLengthOverLimitWithExpectIs413WithoutContinue) {
  Exchange e = exchange(port(), kPost + "Expect: 100-continue\r\nContent-Length: " +
                                    std::to_string(kMaxBody + 1) + "\r\n\r\n");
  EXPECT_TRUE(isJsonError(e.response, 413)) << "first response " << e.response.status;
  EXPECT_TRUE(e.closed);
}

TEST_F(CodecFramingTest, ContentLengthAtLimitPasses) {
  Response r = expectAccepted(kPost + "Content-Length: " + std::to_string(kMaxBody) +
                              "\r\nConnection: close\r\n\r\n" + std::string(kMaxBody, 'x'));
  EXPECT_EQ(echoNumber(r.body, "body_length"), kMaxBody);
}

TEST_F(CodecFramingTest, ChunkedBodyOverLimitIs413) {
  std::string chunk(600, 'x');
  expectRejected(kPost + "Transfer-Encoding: chunked\r\n\r\n258\r\n" + chunk + "\r\n258\r\n" +
                     chunk + "\r\n0\r\n\r\n",
                 413, false);
}

TEST_F(CodecFramingTest, ChunkedBodyUnderLimitPasses) {
  std::string chunk(500, 'y');
  Response r = expectAccepted(kPost + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                              "1f4\r\n" + chunk + "\r\n1f4\r\n" + chunk + "\r\n0\r\n\r\n");
  EXPECT_EQ(echoNumber(r.body, "body_length"), 1000);
}

}  // namespace
}  // namespace sluice::test
