// HTTP Upgrade through the real binary with raw peers (no WebSocket library): which upgrades go
// upstream and which are stripped, a declined upgrade as an ordinary response on a connection
// that keeps parsing HTTP, 101 only for an upgrade request, bytes that travel with the heads,
// half-close, and bounded memory when one side reads slowly.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "test/integration/scripted_upstream.h"
#include "test/integration/ws_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 1
plugin_paths: ${PLUGINS}
admin: { address: 127.0.0.1:${ADMIN} }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
${LISTENER}
clusters:
  - name: up
    retries: 0
    endpoints: [${UP}]
)";

// A one-connection upstream that answers the first request head with `answer` (written in
// one piece, so bytes after a 101 head arrive with it), then echoes every byte it receives.
// When the peer half-closes it writes `farewell` and half-closes too.
class RawTunnelUpstream {
 public:
  RawTunnelUpstream(std::string answer, std::string farewell = "")
      : answer_(std::move(answer)), farewell_(std::move(farewell)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len);
    listen(listen_fd_, 8);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~RawTunnelUpstream() {
    stop_ = true;
    thread_.join();
    close(listen_fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string head() {
    std::lock_guard<std::mutex> lock(mu_);
    return head_;
  }
  bool sawEof() const { return saw_eof_; }

 private:
  // poll() with a short timeout so the destructor can stop it.
  bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    while (!stop_) {
      if (::poll(&p, 1, 50) > 0) return true;
    }
    return false;
  }
  void serve() {
    if (!readable(listen_fd_)) return;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::string in;
    char buf[65536];
    while (in.find("\r\n\r\n") == std::string::npos && readable(fd)) {
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
    size_t end = in.find("\r\n\r\n");
    if (end != std::string::npos) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        head_ = in.substr(0, end + 4);
      }
      send(fd, answer_.data(), answer_.size(), MSG_NOSIGNAL);
      std::string rest = in.substr(end + 4);  // bytes the client sent right after its head
      if (!rest.empty()) send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
      while (readable(fd)) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          saw_eof_ = n == 0;
          break;
        }
        send(fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
      }
      if (saw_eof_) {
        send(fd, farewell_.data(), farewell_.size(), MSG_NOSIGNAL);
        shutdown(fd, SHUT_WR);
        while (readable(fd) && recv(fd, buf, sizeof(buf), 0) > 0) {
        }
      }
    }
    close(fd);
  }

  std::string answer_;
  std::string farewell_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> saw_eof_{false};
  std::mutex mu_;
  std::string head_;
  std::thread thread_;
};

constexpr char kSwitch[] =
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";

bool hasLine(const std::string& head, const std::string& line) {
  return head.find("\r\n" + line + "\r\n") != std::string::npos;
}

TEST(UpgradeTest, BytesTravellingWithTheHeadsBelongToTheTunnel) {
  RawTunnelUpstream upstream(std::string(kSwitch) + "FROM-UPSTREAM", "FAREWELL");
  Gateway g(kConfig, {{"UP", upstream.address()}, {"LISTENER", ""}});
  ASSERT_TRUE(g.ready());
  RawConnection conn(g.port());
  // The client's first tunnel bytes go in the same packet as its request.
  ASSERT_TRUE(conn.send(wsHandshake("/gateway/up/ws", g.port()) + "EARLY-BYTES"));
  Response r = conn.readResponse();
  ASSERT_EQ(r.status, 101) << r.error;
  EXPECT_EQ(r.header("Upgrade"), "websocket");
  EXPECT_EQ(r.header("Connection"), "upgrade");
  EXPECT_EQ(r.header("Sec-WebSocket-Accept"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(conn.readBytes(13), "FROM-UPSTREAM");
  EXPECT_EQ(conn.readBytes(11), "EARLY-BYTES");  // reached the upstream, echoed back
  const std::string not_http = "any bytes at all\r\n\r\nGET / HTTP/1.1\r\n";
  ASSERT_TRUE(conn.send(not_http));
  EXPECT_EQ(conn.readBytes(not_http.size()), not_http);

  std::string head = upstream.head();
  EXPECT_TRUE(hasLine(head, "Upgrade: websocket")) << head;
  EXPECT_TRUE(hasLine(head, "Connection: upgrade")) << head;
  EXPECT_TRUE(hasLine(head, "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")) << head;

  // Half-close: the client's FIN reaches the upstream, which still answers, then closes.
  conn.shutdownWrite();
  EXPECT_EQ(conn.readBytes(8), "FAREWELL");
  EXPECT_TRUE(conn.isClosed(10000));
  EXPECT_TRUE(upstream.sawEof());
}

TEST(UpgradeTest, DeclinedUpgradeIsAnOrdinaryResponseAndTheConnectionKeepsParsing) {
  for (std::string declined :
       {okResponse("plain answer"), std::string("HTTP/1.1 400 Bad Request\r\nContent-Length: 10\r\n"
                                                "\r\nno upgrade")}) {
    ScriptedGateway s([&](const std::string&, int index) {
      return ScriptedUpstream::Reply{index == 0 ? declined : okResponse("second")};
    });
    ASSERT_TRUE(s.gateway.ready());
    RawConnection conn(s.gateway.port());
    ASSERT_TRUE(conn.send(wsHandshake("/gateway/up/ws", s.gateway.port())));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.body, declined.substr(declined.find("\r\n\r\n") + 4));
    // The same connection carries the next request as HTTP.
    ASSERT_TRUE(conn.send(s.get("/gateway/up/next")));
    Response next = conn.readResponse();
    ASSERT_TRUE(next.complete) << next.error;
    EXPECT_EQ(next.body, "second");
    auto requests = s.upstream.requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_TRUE(hasLine(requests[0], "Upgrade: websocket")) << requests[0];
    // An upstream connection that was asked to switch is not reused.
    EXPECT_EQ(s.upstream.connections(), 2);
  }
}

TEST(UpgradeTest, SwitchingProtocolsWithoutUpgradeHeaderIs502) {
  ScriptedGateway s(ScriptedUpstream::Reply{"HTTP/1.1 101 Switching Protocols\r\n\r\n"});
  ASSERT_TRUE(s.gateway.ready());
  Exchange e = exchange(s.gateway.port(), wsHandshake("/gateway/up/ws", s.gateway.port()));
  EXPECT_TRUE(isJsonError(e.response, 502));
}

TEST(UpgradeTest, UpgradeNotAllowedIsStripped) {
  ScriptedUpstream upstream(
      [](const std::string&, int) { return ScriptedUpstream::Reply{okResponse("served")}; });
  Gateway g(kConfig, {{"UP", upstream.address()}, {"LISTENER", ""}});
  ASSERT_TRUE(g.ready());
  RawConnection conn(g.port());
  ASSERT_TRUE(conn.send(buildRequest(
      "GET", "/gateway/up/h2c",
      {{"Connection", "Upgrade, HTTP2-Settings"}, {"Upgrade", "h2c"}, {"HTTP2-Settings", "AAM"}},
      "", g.port())));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(r.body, "served");
  auto requests = upstream.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].find("Upgrade"), std::string::npos) << requests[0];
  EXPECT_EQ(requests[0].find("HTTP2-Settings"), std::string::npos) << requests[0];
}

TEST(UpgradeTest, EmptyUpgradesListStripsWebSocketToo) {
  ScriptedUpstream upstream(
      [](const std::string&, int) { return ScriptedUpstream::Reply{okResponse("served")}; });
  Gateway g(kConfig, {{"UP", upstream.address()}, {"LISTENER", "    upgrades: []"}});
  ASSERT_TRUE(g.ready());
  Exchange e = exchange(g.port(), wsHandshake("/gateway/up/ws", g.port()), 10);
  EXPECT_EQ(e.response.body, "served");
  auto requests = upstream.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].find("Upgrade"), std::string::npos) << requests[0];
}

TEST(UpgradeTest, ConfiguredProtocolsAreForwardedAndOthersDropped) {
  ScriptedUpstream upstream(
      [](const std::string&, int) { return ScriptedUpstream::Reply{okResponse("served")}; });
  Gateway g(kConfig,
            {{"UP", upstream.address()}, {"LISTENER", "    upgrades: [websocket, Foo/2]"}});
  ASSERT_TRUE(g.ready());
  Exchange e = exchange(g.port(),
                        buildRequest("GET", "/gateway/up/x",
                                     {{"Connection", "keep-alive, upgrade"},
                                      {"Upgrade", "bar, foo/2, foo/3, WebSocket"}},
                                     "", g.port()),
                        10);
  EXPECT_EQ(e.response.body, "served");
  auto requests = upstream.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_TRUE(hasLine(requests[0], "Upgrade: foo/2, WebSocket")) << requests[0];
  EXPECT_TRUE(hasLine(requests[0], "Connection: upgrade")) << requests[0];
}

TEST(UpgradeTest, OnlyBodilessHttp11GetRequestsUpgrade) {
  ScriptedUpstream upstream(
      [](const std::string&, int) { return ScriptedUpstream::Reply{okResponse("served")}; });
  Gateway g(kConfig, {{"UP", upstream.address()}, {"LISTENER", ""}});
  ASSERT_TRUE(g.ready());
  const Headers upgrade = {{"Connection", "Upgrade"}, {"Upgrade", "websocket"}};
  // POST with a body, GET with a body, and HTTP/1.0.
  EXPECT_EQ(exchange(g.port(), buildRequest("POST", "/gateway/up/a", upgrade, "body", g.port()), 10)
                .response.body,
            "served");
  EXPECT_EQ(exchange(g.port(), buildRequest("GET", "/gateway/up/b", upgrade, "body", g.port()), 10)
                .response.body,
            "served");
  EXPECT_EQ(exchange(g.port(),
                     "GET /gateway/up/c HTTP/1.0\r\nConnection: Upgrade\r\n"
                     "Upgrade: websocket\r\n\r\n",
                     10)
                .response.body,
            "served");
  auto requests = upstream.requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const std::string& head : requests) {
    EXPECT_EQ(head.find("Upgrade"), std::string::npos) << head;
  }
}

TEST(UpgradeTest, SlowReaderKeepsTunnelMemoryBounded) {
  // 64 MiB down a tunnel whose client does not read for a while: sluice stops reading the
  // upstream instead of buffering, then everything arrives in order.
  constexpr size_t kTotal = 64u << 20;
  std::string answer = kSwitch;
  RawTunnelUpstream upstream(answer);
  Gateway g(kConfig, {{"UP", upstream.address()}, {"LISTENER", ""}});
  ASSERT_TRUE(g.ready());
  RawConnection conn(g.port(), 20000);
  ASSERT_TRUE(conn.send(wsHandshake("/gateway/up/ws", g.port())));
  Response r = conn.readResponse();
  ASSERT_EQ(r.status, 101) << r.error;
  int64_t rss_before = vmRssKiB(g.process().pid());
  // The upstream echoes: what we send comes back. Send it all from a thread while not reading.
  std::thread writer([&] {
    std::string chunk = patternBytes(0, 1 << 20);
    for (size_t sent = 0; sent < kTotal; sent += chunk.size()) {
      if (!conn.send(patternBytes(sent, chunk.size()))) return;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  int64_t rss_stalled = vmRssKiB(g.process().pid());
  size_t got = 0;
  bool intact = true;
  while (got < kTotal) {
    std::string piece = conn.readBytes(std::min<size_t>(1 << 20, kTotal - got));
    if (piece.empty()) break;
    if (piece != patternBytes(got, piece.size())) intact = false;
    got += piece.size();
  }
  writer.join();
  EXPECT_EQ(got, kTotal);
  EXPECT_TRUE(intact);
  // Both directions stalled (the client reads nothing): what sluice holds stays far below the
  // 64 MiB that went in.
  ASSERT_GT(rss_before, 0);
  if (kRssIsMeaningful)
    EXPECT_LT(rss_stalled - rss_before, 16 * 1024) << rss_before << " KiB → " << rss_stalled;
}

}  // namespace
}  // namespace sluice::test
