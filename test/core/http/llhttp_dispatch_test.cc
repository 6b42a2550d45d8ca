// The two builds of llhttp's state machine (baseline and -msse4.2, core/http/llhttp_dispatch.h)
// parse alike: the same verdict, status, reason, consumed bytes and head for the same input,
// whole and split. The SSE4.2 copy differs in the spans it scans 16 bytes at a time (header
// values, tokens), so the inputs put every byte value into long names and values, at every
// position of a 16-byte block. (parser_test runs with the build the CPU picks;
// parser_baseline_test runs the same suite with the baseline copy.)
#include "core/http/llhttp_dispatch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/http/parser.h"

namespace sluice::http {
namespace {

struct Recorder : ParserCallbacks {
  std::string log;
  int onHead(MessageHead& h) override {
    log += "head " + h.method + " " + h.target + " " + std::to_string(h.status) + " " + h.reason +
           " " + std::to_string(static_cast<int>(h.framing)) + " " +
           std::to_string(h.content_length) + " " + std::to_string(h.keep_alive) + "\n";
    for (const HeaderField& f : h.headers.fields()) {
      log.append(f.name).append(": [").append(f.value).append("]\n");
    }
    return 0;
  }
  void onBody(const char* d, size_t n) override { log.append("body ").append(d, n) += "\n"; }
  bool onMessageComplete() override {
    log += "complete\n";
    return false;
  }
};

// Everything the parser reports for `wire`, fed in pieces of `step` bytes (0: whole).
std::string parse(LlhttpBuild build, Parser::Type type, const std::string& wire, size_t step) {
  EXPECT_TRUE(setLlhttpBuild(build));
  Recorder r;
  Parser p(type, &r, ParserLimits{});
  std::string out;
  size_t at = 0;
  Parser::Result res = Parser::Result::kOk;
  while (at < wire.size()) {
    const size_t n = step == 0 ? wire.size() - at : std::min(step, wire.size() - at);
    size_t consumed = 0;
    res = p.execute(wire.data() + at, n, &consumed);
    out += "consumed " + std::to_string(consumed) + "\n";
    if (res != Parser::Result::kOk) break;
    at += n;
  }
  if (res == Parser::Result::kOk) res = p.finish();
  out += "result " + std::to_string(static_cast<int>(res)) + " " + std::to_string(p.errorStatus()) +
         " " + p.errorReason() + "\n";
  return r.log + out;
}

class LlhttpBuildsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!llhttpSse42Available()) GTEST_SKIP() << "no SSE4.2 copy on this CPU/build";
    saved_ = llhttpBuild();
  }
  void TearDown() override { setLlhttpBuild(saved_); }

  void expectSame(Parser::Type type, const std::string& wire) {
    for (size_t step : {size_t{0}, size_t{1}, size_t{7}, size_t{16}}) {
      const std::string base = parse(LlhttpBuild::kBaseline, type, wire, step);
      const std::string sse = parse(LlhttpBuild::kSse42, type, wire, step);
      ASSERT_EQ(base, sse) << "step " << step << ", input:\n" << wire;
    }
  }

  LlhttpBuild saved_ = LlhttpBuild::kBaseline;
};

TEST(LlhttpDispatchTest, TheSse42CopyIsChosenWhenTheCpuHasIt) {
  EXPECT_EQ(llhttpBuild(), llhttpSse42Available() ? LlhttpBuild::kSse42 : LlhttpBuild::kBaseline);
#if defined(__x86_64__)
  __builtin_cpu_init();
  EXPECT_EQ(llhttpSse42Available(), __builtin_cpu_supports("sse4.2") != 0);
#endif
}

TEST_F(LlhttpBuildsTest, EveryByteInALongHeaderValue) {
  for (int c = 0; c < 256; ++c) {
    for (size_t pos : {size_t{0}, size_t{5}, size_t{15}, size_t{16}, size_t{17}, size_t{40}}) {
      std::string value(48, 'v');
      value[pos] = static_cast<char>(c);
      expectSame(Parser::Type::kRequest,
                 "GET / HTTP/1.1\r\nHost: h\r\nX-Long: " + value + "\r\nX-B: 1\r\n\r\n");
      expectSame(Parser::Type::kResponse,
                 "HTTP/1.1 200 OK\r\nX-Long: " + value + "\r\nContent-Length: 2\r\n\r\nok");
    }
  }
}

TEST_F(LlhttpBuildsTest, EveryByteInALongHeaderName) {
  for (int c = 0; c < 256; ++c) {
    for (size_t pos : {size_t{0}, size_t{3}, size_t{15}, size_t{16}, size_t{31}}) {
      std::string name(34, 'n');
      name[pos] = static_cast<char>(c);
      expectSame(Parser::Type::kRequest, "GET / HTTP/1.1\r\nHost: h\r\n" + name + ": v\r\n\r\n");
    }
  }
}

TEST_F(LlhttpBuildsTest, EveryByteInALongTargetAndReason) {
  for (int c = 0; c < 256; ++c) {
    std::string target = "/" + std::string(40, 't');
    target[20] = static_cast<char>(c);
    expectSame(Parser::Type::kRequest, "GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n");
    std::string reason(40, 'r');
    reason[17] = static_cast<char>(c);
    expectSame(Parser::Type::kResponse, "HTTP/1.1 200 " + reason + "\r\nContent-Length: 0\r\n\r\n");
  }
}

TEST_F(LlhttpBuildsTest, MessagesOfTheParserSuite) {
  const std::vector<std::string> requests = {
      "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\n\r\n",
      "POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
      "POST /u HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\nGET / HTTP/1.1\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-Fold: a\r\n  b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "GET / HTTP/1.0\r\nConnection: keep-alive\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)"
      "\r\nAccept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.8\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: x\r\nX-Tab:\tvalue with\ttabs\t \r\n\r\n",
      "GET / HTTP/1.1\nHost: x\n\n",
  };
  for (const std::string& w : requests) expectSame(Parser::Type::kRequest, w);
  expectSame(
      Parser::Type::kResponse,
      "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Wed, 02 Dec 2026 04:00:00 GMT\r\n"
      "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello\n\r\n0\r\n\r\n");
}

}  // namespace
}  // namespace sluice::http
