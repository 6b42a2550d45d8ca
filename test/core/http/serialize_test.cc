// Message heads and chunk framing as written to the wire.
#include "core/http/serialize.h"

#include <event2/buffer.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace sluice::http {
namespace {

std::string drain(evbuffer* b) {
  std::string s(evbuffer_get_length(b), '\0');
  evbuffer_remove(b, s.data(), s.size());
  return s;
}

class SerializeTest : public ::testing::Test {
 protected:
  void SetUp() override { out_ = evbuffer_new(); }
  void TearDown() override { evbuffer_free(out_); }
  evbuffer* out_ = nullptr;
};

TEST_F(SerializeTest, RequestHeadSkipsFramingFieldsAndWritesOurs) {
  HeaderMap h;
  h.add("Host", "example.com");
  h.add("content-length", "99");       // framing comes from the argument, never the map
  h.add("Transfer-Encoding", "gzip");  // idem
  h.add("X-A", "");
  writeRequestHead(out_, "POST", "/p?q=1", h, Framing::kContentLength, 12);
  EXPECT_EQ(drain(out_),
            "POST /p?q=1 HTTP/1.1\r\nHost: example.com\r\nX-A: \r\nContent-Length: 12\r\n\r\n");
  writeRequestHead(out_, "GET", "/", HeaderMap(), Framing::kChunked, 0);
  EXPECT_EQ(drain(out_), "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  writeRequestHead(out_, "GET", "/", HeaderMap(), Framing::kNone, 0);
  EXPECT_EQ(drain(out_), "GET / HTTP/1.1\r\n\r\n");
}

TEST_F(SerializeTest, ResponseHeadStatusReasonLengthAndConnection) {
  HeaderMap h;
  h.add("Server", "x");
  writeResponseHead(out_, 200, "", h, Framing::kContentLength, 0, false, false);
  EXPECT_EQ(drain(out_), "HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 0\r\n\r\n");
  writeResponseHead(out_, 404, "Nope", h, Framing::kContentLength, UINT64_MAX, true, false);
  EXPECT_EQ(drain(out_),
            "HTTP/1.1 404 Nope\r\nServer: x\r\nContent-Length: 18446744073709551615\r\n"
            "Connection: close\r\n\r\n");
  writeResponseHead(out_, 599, "", HeaderMap(), Framing::kUntilClose, 0, false, true);
  EXPECT_EQ(drain(out_), "HTTP/1.1 599 Unknown\r\nConnection: keep-alive\r\n\r\n");
  writeResponseHead(out_, 100, "", HeaderMap(), Framing::kNone, 0, false, false);
  EXPECT_EQ(drain(out_), "HTTP/1.1 100 Continue\r\n\r\n");
  writeResponseHead(out_, 200, "OK", HeaderMap(), Framing::kChunked, 0, false, false);
  EXPECT_EQ(drain(out_), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
}

TEST_F(SerializeTest, LargeHeadAfterExistingDataStaysContiguousAndOrdered) {
  // Bigger than one evbuffer chunk, written behind bytes already in the buffer.
  evbuffer_add(out_, "before", 6);
  HeaderMap h;
  std::string big(20000, 'v');
  h.add("X-Big", big);
  h.add("X-Small", "s");
  writeResponseHead(out_, 200, "OK", h, Framing::kNone, 0, false, false);
  EXPECT_EQ(drain(out_), "beforeHTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nX-Small: s\r\n\r\n");
}

TEST_F(SerializeTest, Chunks) {
  writeChunk(out_, "hello", 5);
  writeChunk(out_, "", 0);  // nothing: a zero-size chunk would end the body
  std::string big(0x1abc, 'z');
  writeChunk(out_, big.data(), big.size());
  writeLastChunk(out_);
  EXPECT_EQ(drain(out_), "5\r\nhello\r\n1abc\r\n" + big + "\r\n0\r\n\r\n");
}

}  // namespace
}  // namespace sluice::http
