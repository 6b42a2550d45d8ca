// The strict request/response parser: every DESIGN.md §6 rule the codec owns.
#include "core/http/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::http {
namespace {

struct Recorder : ParserCallbacks {
  std::vector<MessageHead> heads;
  std::string body;
  int completed = 0;
  bool pause = false;
  int head_result = 0;
  int onHead(MessageHead& h) override {
    heads.push_back(h);
    return head_result;
  }
  void onBody(const char* d, size_t n) override { body.append(d, n); }
  bool onMessageComplete() override {
    ++completed;
    return pause;
  }
};

struct Outcome {
  Parser::Result result;
  uint32_t status;
  std::string reason;
};

Outcome parseRequest(const std::string& wire, Recorder* rec = nullptr, ParserLimits limits = {}) {
  Recorder local;
  Recorder* r = rec != nullptr ? rec : &local;
  Parser p(Parser::Type::kRequest, r, limits);
  size_t consumed = 0;
  Parser::Result res = p.execute(wire.data(), wire.size(), &consumed);
  return {res, p.errorStatus(), p.errorReason()};
}

Outcome parseResponse(const std::string& wire, Recorder* rec) {
  Parser p(Parser::Type::kResponse, rec, ParserLimits{});
  size_t consumed = 0;
  Parser::Result res = p.execute(wire.data(), wire.size(), &consumed);
  if (res == Parser::Result::kOk) res = p.finish();
  return {res, p.errorStatus(), p.errorReason()};
}

Outcome parseByteByByte(const std::string& wire, Recorder* r);

void expectRejected(const std::string& wire, uint32_t status) {
  Outcome o = parseRequest(wire);
  EXPECT_EQ(o.result, Parser::Result::kError) << wire;
  EXPECT_EQ(o.status, status) << wire << " → " << o.reason;
}

TEST(ParserTest, SimpleGetKeepsHeadersInOrder) {
  Recorder r;
  Outcome o = parseRequest("GET /a?b=1 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\n\r\n", &r);
  ASSERT_EQ(o.result, Parser::Result::kOk);
  ASSERT_EQ(r.heads.size(), 1u);
  const MessageHead& h = r.heads[0];
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.target, "/a?b=1");
  EXPECT_EQ(h.framing, Framing::kNone);
  EXPECT_EQ(h.headers.count("X-A"), 2u);
  EXPECT_EQ(*h.headers.get("x-a", 1), "2");
  EXPECT_EQ(r.completed, 1);
}

TEST(ParserTest, ValuesLoseTheirSurroundingWhitespaceWholeOrByteByByte) {
  const std::string wire =
      "GET / HTTP/1.1\r\nHost: x\r\nX-A: \t a \t b \t \r\nX-B:c\t\r\nX-C:   \r\n\r\n";
  Recorder whole;
  ASSERT_EQ(parseRequest(wire, &whole).result, Parser::Result::kOk);
  Recorder bytes;
  ASSERT_EQ(parseByteByByte(wire, &bytes).result, Parser::Result::kOk);
  for (const Recorder* r : {&whole, &bytes}) {
    ASSERT_EQ(r->heads.size(), 1u);
    EXPECT_EQ(*r->heads[0].headers.get("x-a"), "a \t b");
    EXPECT_EQ(*r->heads[0].headers.get("x-b"), "c");
    EXPECT_EQ(*r->heads[0].headers.get("x-c"), "");
  }
}

TEST(ParserTest, ContentLengthBodyAndChunkedBodyAreDecoded) {
  Recorder r;
  ASSERT_EQ(parseRequest("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", &r).result,
            Parser::Result::kOk);
  EXPECT_EQ(r.heads[0].framing, Framing::kContentLength);
  EXPECT_EQ(r.heads[0].content_length, 5u);
  EXPECT_EQ(r.body, "hello");
  Recorder c;
  ASSERT_EQ(parseRequest("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
                         &c)
                .result,
            Parser::Result::kOk);
  EXPECT_EQ(c.heads[0].framing, Framing::kChunked);
  EXPECT_FALSE(c.heads[0].headers.has("transfer-encoding"));  // framing says it
  EXPECT_EQ(c.body, "abcde");
}

TEST(ParserTest, SmugglingShapesAreRefused) {
  expectRejected(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked"
      "\r\n\r\n0\r\n\r\n",
      400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n", 400);
  expectRejected(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      400);
  expectRejected("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
                 400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc", 400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -3\r\n\r\nabc", 400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc", 400);
  expectRejected("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                 400);
}

TEST(ParserTest, LineAndFieldSyntaxErrorsAreRefused) {
  expectRejected("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", 400);  // obs-fold
  expectRejected("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400);               // space before colon
  expectRejected("GET / HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n", 400);         // empty name
  expectRejected("GET / HTTP/1.1\nHost: x\n\n", 400);                      // bare LF
  expectRejected("GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", 400);          // bare CR
  expectRejected(std::string("GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n", 35), 400);  // NUL
  expectRejected("GET / HTTP/1.1\r\nHost: x\r\nX: a\x01 b\r\n\r\n", 400);  // CTL in value
  expectRejected("GET / HTTP/1.1\r\n\r\n", 400);                           // no Host in 1.1
  expectRejected("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400);     // two Hosts
  expectRejected("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505);
  expectRejected("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400);
}

// llhttp ends a CONNECT at its head; a body it announced would become the next request.
TEST(ParserTest, ConnectIsRefusedSoItsBodyCannotSmuggleARequest) {
  Recorder r;
  Outcome o = parseRequest(
      "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nContent-Length: 3\r\n\r\n"
      "abcGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
      &r);
  EXPECT_EQ(o.result, Parser::Result::kError);
  EXPECT_EQ(o.status, 501u);
  EXPECT_TRUE(r.heads.empty());
}

// Feeding one byte at a time must not change any verdict (values split across reads).
Outcome parseByteByByte(const std::string& wire, Recorder* r) {
  Parser p(Parser::Type::kRequest, r, ParserLimits{});
  for (size_t i = 0; i < wire.size(); ++i) {
    size_t consumed = 0;
    Parser::Result res = p.execute(wire.data() + i, 1, &consumed);
    if (res != Parser::Result::kOk) return {res, p.errorStatus(), p.errorReason()};
  }
  return {Parser::Result::kOk, 0, ""};
}

TEST(ParserTest, ByteByByteParsingGivesTheSameVerdicts) {
  Recorder ok;
  ASSERT_EQ(parseByteByByte("GET / HTTP/1.1\r\nHost: x\r\nX-Long: a b  c\r\n\r\n", &ok).result,
            Parser::Result::kOk);
  ASSERT_EQ(ok.heads.size(), 1u);
  EXPECT_EQ(*ok.heads[0].headers.get("x-long"), "a b  c");
  // Interned names are looked up once the name is whole, however it arrived.
  Recorder split;
  ASSERT_EQ(parseByteByByte("POST / HTTP/1.1\r\nhOsT: x\r\nCoNtEnT-LeNgTh: 2\r\n"
                            "Connection: keep-alive, CLOSE\r\n\r\nab",
                            &split)
                .result,
            Parser::Result::kOk);
  ASSERT_EQ(split.heads.size(), 1u);
  EXPECT_EQ(split.heads[0].headers.fields()[0].id, HeaderId::kHost);
  EXPECT_EQ(split.heads[0].headers.fields()[1].id, HeaderId::kContentLength);
  EXPECT_EQ(split.heads[0].framing, Framing::kContentLength);
  EXPECT_FALSE(split.heads[0].keep_alive);
  EXPECT_EQ(split.body, "ab");
  Recorder two_hosts;
  EXPECT_EQ(parseByteByByte("GET / HTTP/1.1\r\nHost: x\r\nHOST: y\r\n\r\n", &two_hosts).status,
            400u);
  Recorder fold;
  EXPECT_EQ(parseByteByByte("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", &fold).status, 400u);
  Recorder empty_fold;
  EXPECT_EQ(parseByteByByte("GET / HTTP/1.1\r\nHost: x\r\nX:\r\n b\r\n\r\n", &empty_fold).status,
            400u);
}

TEST(ParserTest, BadChunksAreRefused) {
  const std::string head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  expectRejected(head + "zz\r\n", 400);
  expectRejected(head + "fffffffffffffffff1\r\n", 400);    // overflow
  expectRejected(head + "3\r\nabcdef\r\n0\r\n\r\n", 400);  // data longer than declared
  expectRejected(head + "3\nabc\n0\n\n", 400);             // bare LF in chunk framing
  expectRejected(head + "3 \r\nabc\r\n0\r\n\r\n", 400);
}

TEST(ParserTest, LimitsGiveTheirStatus) {
  ParserLimits l;
  l.max_target_bytes = 16;
  l.max_header_bytes = 64;
  l.max_header_count = 3;
  l.max_body_bytes = 4;
  Outcome o =
      parseRequest("GET /" + std::string(40, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", nullptr, l);
  EXPECT_EQ(o.status, 414u);
  o = parseRequest("GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(100, 'v') + "\r\n\r\n", nullptr,
                   l);
  EXPECT_EQ(o.status, 431u);
  o = parseRequest("GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", nullptr, l);
  EXPECT_EQ(o.status, 431u);
  o = parseRequest("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", nullptr, l);
  EXPECT_EQ(o.status, 413u);
  o = parseRequest(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
      "0\r\n\r\n",
      nullptr, l);
  EXPECT_EQ(o.status, 413u);
}

TEST(ParserTest, PipelinedRequestsPauseAfterEachMessage) {
  Recorder r;
  r.pause = true;
  Parser p(Parser::Type::kRequest, &r, ParserLimits{});
  std::string wire = "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n";
  size_t consumed = 0;
  ASSERT_EQ(p.execute(wire.data(), wire.size(), &consumed), Parser::Result::kPaused);
  EXPECT_EQ(r.heads.size(), 1u);
  EXPECT_EQ(wire.substr(consumed).rfind("GET /2", 0), 0u);
  p.resume();
  size_t rest = 0;
  ASSERT_EQ(p.execute(wire.data() + consumed, wire.size() - consumed, &rest),
            Parser::Result::kPaused);
  ASSERT_EQ(r.heads.size(), 2u);
  EXPECT_EQ(r.heads[1].target, "/2");
}

TEST(ParserTest, Http10KeepAliveOnlyWhenAsked) {
  Recorder r;
  parseRequest("GET / HTTP/1.0\r\n\r\n", &r);
  EXPECT_FALSE(r.heads[0].keep_alive);
  Recorder k;
  parseRequest("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &k);
  EXPECT_TRUE(k.heads[0].keep_alive);
  Recorder c;
  parseRequest("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &c);
  EXPECT_FALSE(c.heads[0].keep_alive);
}

// RFC 9112 §9.3: "close" wins over "keep-alive" wherever it appears. llhttp's HTTP/1.0 rule only
// looks for the keep-alive token (the codec_response_fuzz finding "keep-alive despite
// Connection: close"); an upstream connection its server is closing must never be pooled, and a
// client that said close must get Connection: close and a closed connection.
TEST(ParserTest, ConnectionCloseWinsOverKeepAlive) {
  const std::vector<std::string> closing = {
      "Connection: keep-alive\r\nConnection: close\r\n",
      "Connection: close\r\nConnection: keep-alive\r\n",
      "Connection: keep-alive, close\r\n",
      "Connection: close, keep-alive\r\n",
      "Connection: Keep-Alive\r\nConnection: CLOSE\r\n",
      "Connection: keep-alive,close\r\n",
      "Connection: keep-alive\r\nX-A: 1\r\nconnection: Close\r\n",
      "Connection: upgrade, CLoSe\r\n",
  };
  for (int minor : {0, 1}) {
    std::string version = "HTTP/1." + std::to_string(minor);
    for (const std::string& fields : closing) {
      Recorder q;
      ASSERT_EQ(parseRequest("GET / " + version + "\r\nHost: x\r\n" + fields + "\r\n", &q).result,
                Parser::Result::kOk)
          << version << " " << fields;
      ASSERT_EQ(q.heads.size(), 1u);
      EXPECT_FALSE(q.heads[0].keep_alive) << "request " << version << " " << fields;

      Recorder r;
      std::string wire = version + " 200 OK\r\n" + fields + "Content-Length: 2\r\n\r\nok";
      ASSERT_EQ(parseResponse(wire, &r).result, Parser::Result::kOk) << wire;
      ASSERT_EQ(r.heads.size(), 1u);
      EXPECT_FALSE(r.heads[0].keep_alive) << "response " << wire;
      EXPECT_EQ(r.body, "ok");
    }
  }
}

TEST(ParserTest, KeepAliveTokensInAnyCaseAndPosition) {
  for (const char* fields :
       {"Connection: keep-alive\r\n", "Connection: Keep-Alive\r\n", "Connection: KEEP-ALIVE\r\n",
        "Connection: x-foo, keep-alive\r\n", "Connection: x-foo\r\nConnection: keep-alive\r\n"}) {
    Recorder q;
    parseRequest("GET / HTTP/1.0\r\n" + std::string(fields) + "\r\n", &q);
    ASSERT_EQ(q.heads.size(), 1u);
    EXPECT_TRUE(q.heads[0].keep_alive) << fields;
    Recorder r;
    parseResponse("HTTP/1.0 200 OK\r\n" + std::string(fields) + "Content-Length: 0\r\n\r\n", &r);
    ASSERT_EQ(r.heads.size(), 1u);
    EXPECT_TRUE(r.heads[0].keep_alive) << fields;
  }
  // Not the keep-alive token: 1.0 closes; 1.1 persists by default.
  for (const char* fields : {"Connection: keep-alive-ish\r\n", "Keep-Alive: timeout=5\r\n",
                             "Proxy-Connection: keep-alive\r\n", "Connection: x-foo\r\n"}) {
    Recorder q;
    parseRequest("GET / HTTP/1.0\r\n" + std::string(fields) + "\r\n", &q);
    ASSERT_EQ(q.heads.size(), 1u);
    EXPECT_FALSE(q.heads[0].keep_alive) << fields;
    Recorder r;
    parseRequest("GET / HTTP/1.1\r\nHost: x\r\n" + std::string(fields) + "\r\n", &r);
    ASSERT_EQ(r.heads.size(), 1u);
    EXPECT_TRUE(r.heads[0].keep_alive) << fields;
  }
  // "closed" is not "close".
  Recorder c;
  parseRequest("GET / HTTP/1.1\r\nHost: x\r\nConnection: closed\r\n\r\n", &c);
  ASSERT_EQ(c.heads.size(), 1u);
  EXPECT_TRUE(c.heads[0].keep_alive);
  // A close-delimited response body ends the connection whatever Connection says.
  Recorder u;
  parseResponse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nbody", &u);
  ASSERT_EQ(u.heads.size(), 1u);
  EXPECT_FALSE(u.heads[0].keep_alive);
}

TEST(ParserTest, ResponsesAreAsStrictAsRequests) {
  Recorder r;
  EXPECT_EQ(parseResponse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc", &r).status,
            502u);
  Recorder a;
  EXPECT_EQ(parseResponse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n"
                          "\r\n0\r\n\r\n",
                          &a)
                .status,
            502u);
  Recorder b;
  EXPECT_EQ(parseResponse("HTTP/1.1 200 OK\nContent-Length: 0\n\n", &b).status, 502u);
  Recorder f;
  EXPECT_EQ(parseResponse("HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", &f).status,
            502u);
}

TEST(ParserTest, ResponseFramingRules) {
  Recorder r;
  ASSERT_EQ(parseResponse("HTTP/1.1 200 OK\r\n\r\nuntil close", &r).result, Parser::Result::kOk);
  EXPECT_EQ(r.heads[0].framing, Framing::kUntilClose);
  EXPECT_EQ(r.body, "until close");
  Recorder n;
  ASSERT_EQ(parseResponse("HTTP/1.1 204 No Content\r\n\r\n", &n).result, Parser::Result::kOk);
  EXPECT_EQ(n.heads[0].framing, Framing::kNone);
  Recorder i;  // 1xx then final
  ASSERT_EQ(parseResponse(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", &i)
                .result,
            Parser::Result::kOk);
  ASSERT_EQ(i.heads.size(), 2u);
  EXPECT_EQ(i.heads[0].status, 100u);
  EXPECT_EQ(i.heads[1].status, 200u);
  EXPECT_EQ(i.body, "ok");
  Recorder h;  // a response to HEAD: the callback says there is no body
  h.head_result = 1;
  Parser p(Parser::Type::kResponse, &h, ParserLimits{});
  std::string wire =
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  size_t consumed = 0;
  EXPECT_EQ(p.execute(wire.data(), wire.size(), &consumed), Parser::Result::kOk);
  EXPECT_EQ(h.completed, 2);
}

TEST(ParserTest, TruncatedContentLengthBodyIsAnErrorAtClose) {
  Recorder r;
  Outcome o = parseResponse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", &r);
  EXPECT_EQ(o.result, Parser::Result::kError);
}

}  // namespace
}  // namespace sluice::http

namespace sluice::http {
namespace {

// The fields of a buffer are views of it until the parser copies them into the head's arena
// (at the end of each execute and when the head completes): split anywhere, into buffers
// scribbled over once parsed, two pipelined heads keep every name and value.
TEST(ParserTest, FieldsSurviveTheirInputAtEverySplitPoint) {
  const std::string wire =
      "GET /a HTTP/1.1\r\nHost: x\r\nX-A:  one \r\nConnection: keep-alive\r\nX-Empty:\r\n"
      "X-B: two\r\n\r\n"
      "GET /b HTTP/1.1\r\nhost: y\r\nX-C:" +
      std::string(40, ' ') + "three\r\n\r\n";
  for (size_t cut = 1; cut < wire.size(); ++cut) {
    Recorder r;
    Parser p(Parser::Type::kRequest, &r, ParserLimits{});
    for (auto [from, to] : {std::pair<size_t, size_t>{0, cut}, {cut, wire.size()}}) {
      std::string buffer = wire.substr(from, to - from);
      size_t consumed = 0;
      ASSERT_EQ(p.execute(buffer.data(), buffer.size(), &consumed), Parser::Result::kOk) << cut;
      buffer.assign(buffer.size(), '#');
    }
    ASSERT_EQ(r.heads.size(), 2u) << cut;
    const HeaderMap& a = r.heads[0].headers;
    ASSERT_EQ(a.size(), 5u) << cut;
    EXPECT_EQ(a.fields()[0].name, "Host");
    EXPECT_EQ(a.fields()[0].value, "x");
    EXPECT_EQ(a.fields()[1].name, "X-A");
    EXPECT_EQ(a.fields()[1].value, "one") << cut;
    EXPECT_EQ(a.fields()[2].value, "keep-alive");
    EXPECT_EQ(a.fields()[3].name, "X-Empty");
    EXPECT_EQ(a.fields()[3].value, "");
    EXPECT_EQ(a.fields()[4].value, "two");
    EXPECT_EQ(a.fields()[2].id, HeaderId::kConnection);
    EXPECT_NE(a.connectionOptions() & HeaderMap::idBit(HeaderId::kKeepAlive), 0u) << cut;
    const HeaderMap& b = r.heads[1].headers;
    ASSERT_EQ(b.size(), 2u) << cut;
    EXPECT_EQ(b.fields()[0].id, HeaderId::kHost);
    EXPECT_EQ(b.fields()[0].value, "y");
    EXPECT_EQ(b.fields()[1].value, "three") << cut;
  }
}

}  // namespace
}  // namespace sluice::http
