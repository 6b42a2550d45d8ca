// Heap allocations of the codec for one proxied keep-alive GET in steady state (the shape of
// bench/instructions: a one-field request, an nginx-like five-field response): the request and
// response parsed, hop-by-hop stripped, the proxy's fields set, both heads written. Counts
// operator new (std::string, std::vector); libevent's own buffer memory is not counted.
#include <event2/buffer.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <utility>

#include "core/http/headers.h"
#include "core/http/parser.h"
#include "core/http/serialize.h"

namespace {
std::atomic<size_t> g_allocations{0};
}  // namespace

void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace sluice::http {
namespace {

// Takes each head the way the proxy's Stream does: a request head swapped out of the parser
// whole, a response's header map and reason (the parser keeps the framing it still needs).
struct Taker : ParserCallbacks {
  bool whole = true;
  MessageHead taken;
  int onHead(MessageHead& head) override {
    if (whole) {
      std::swap(taken, head);
    } else {
      taken.status = head.status;
      taken.reason.swap(head.reason);
      taken.headers.swap(head.headers);
      taken.framing = head.framing;
      taken.content_length = head.content_length;
    }
    return 0;
  }
  void onBody(const char*, size_t) override {}
  bool onMessageComplete() override { return false; }
};

const std::string kRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";
const std::string kResponse =
    "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 01 Dec 2026 16:22:28 GMT\r\n"
    "Content-Type: text/plain\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\nhello\n";

// One request and its response through the codec, each head taken by a fresh "stream" as the
// proxy does; returns the allocations made.
size_t proxyOnce(Parser& request_parser, Taker& req, Parser& response_parser, Taker& resp,
                 evbuffer* out) {
  req.taken = MessageHead();  // a new Stream's empty heads
  resp.taken = MessageHead();
  const size_t before = g_allocations.load();
  size_t consumed = 0;
  EXPECT_EQ(request_parser.execute(kRequest.data(), kRequest.size(), &consumed),
            Parser::Result::kOk)
      << request_parser.errorReason();
  MessageHead& rq = req.taken;
  stripHopByHop(rq.headers);
  rq.headers.set("X-Forwarded-For", "127.0.0.1");
  rq.headers.set("X-Forwarded-Proto", "http");
  writeRequestHead(out, rq.method, rq.target, rq.headers, rq.framing, rq.content_length);
  EXPECT_EQ(response_parser.execute(kResponse.data(), kResponse.size(), &consumed),
            Parser::Result::kOk)
      << response_parser.errorReason();
  MessageHead& rs = resp.taken;
  stripHopByHop(rs.headers);
  writeResponseHead(out, rs.status, rs.reason, rs.headers, rs.framing, rs.content_length, false,
                    false);
  const size_t n = g_allocations.load() - before;
  evbuffer_drain(out, evbuffer_get_length(out));
  return n;
}

TEST(AllocationTest, ProxiedGetAllocatesNothingInSteadyState) {
  Taker req;
  Taker resp;
  resp.whole = false;
  Parser request_parser(Parser::Type::kRequest, &req, ParserLimits{});
  Parser response_parser(Parser::Type::kResponse, &resp, ParserLimits{});
  evbuffer* out = evbuffer_new();
  proxyOnce(request_parser, req, response_parser, resp, out);  // warm-up: buffers, statics
  const size_t n = proxyOnce(request_parser, req, response_parser, resp, out);
  EXPECT_EQ(req.taken.headers.size(), 3u);
  EXPECT_EQ(resp.taken.headers.size(), 4u);  // Connection stripped
  std::cout << "allocations per proxied GET (codec): " << n << "\n";
  // None: names and values are copied into the maps' arenas, which with the field vectors
  // come from the thread's spares. Any allocation is a regression.
  EXPECT_EQ(n, 0u);
  evbuffer_free(out);
}

}  // namespace
}  // namespace sluice::http
