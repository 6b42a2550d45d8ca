// WebSocket through the real binary with real peers (python3-websockets): messages of every
// kind and size, both close handshakes, TLS on both legs, and what happens to an open tunnel
// on reload, drain, its idle timeout, the HTTP timeouts and a client that goes away.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <thread>

#include "test/harness/certs.h"
#include "test/integration/access_log_util.h"
#include "test/integration/ws_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
drain_timeout_ms: ${DRAIN}
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
limits: { idle_timeout_ms: ${HTTP_IDLE} }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    access_log: { path: ${LOG} }
${LISTENER}
clusters:
  - name: ws
    response_timeout_ms: ${RESPONSE_TIMEOUT}
    endpoints: [${WS}]
)";

class WebSocketTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = std::make_unique<WsEchoServer>();
    gateway_ = start(*server_, {});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    server_.reset();
  }

  // The template's variables with these overrides.
  static std::map<std::string, std::string> vars(const WsEchoServer& server,
                                                 std::map<std::string, std::string> extra) {
    std::map<std::string, std::string> v = {
        {"WS", server.address()},      {"DRAIN", "15000"}, {"HTTP_IDLE", "60000"},
        {"RESPONSE_TIMEOUT", "15000"}, {"LISTENER", ""},   {"LOG", uniqueTmpPath("access.log")}};
    for (auto& [k, value] : extra) v[k] = value;
    return v;
  }
  static std::unique_ptr<Gateway> start(const WsEchoServer& server,
                                        std::map<std::string, std::string> extra) {
    return std::make_unique<Gateway>(kConfig, vars(server, std::move(extra)));
  }
  static std::string url(const Gateway& g) {
    return "ws://127.0.0.1:" + std::to_string(g.port()) + "/gateway/ws/echo";
  }

  static std::unique_ptr<WsEchoServer> server_;
  static std::unique_ptr<Gateway> gateway_;
};

std::unique_ptr<WsEchoServer> WebSocketTest::server_;
std::unique_ptr<Gateway> WebSocketTest::gateway_;

TEST_F(WebSocketTest, TextAndBinaryMessagesEcho) {
  ASSERT_TRUE(gateway_->ready());
  WsClientRun run = runWsClient(url(*gateway_), "echo");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("OK echo"), std::string::npos) << run.output;
  // The upstream saw the path as routed (context path and cluster name stripped).
  EXPECT_NE(server_->process().output().find("open /ws/echo"), std::string::npos);
}

TEST_F(WebSocketTest, OneMebibyteMessageEchoesIntact) {
  ASSERT_TRUE(gateway_->ready());
  WsClientRun run = runWsClient(url(*gateway_), "big");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("OK big 1048576"), std::string::npos) << run.output;
}

TEST_F(WebSocketTest, ThousandMessagesBackToBackComeBackInOrder) {
  ASSERT_TRUE(gateway_->ready());
  WsClientRun run = runWsClient(url(*gateway_), "many");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("OK many 1000"), std::string::npos) << run.output;
}

TEST_F(WebSocketTest, ClientCloseHandshakePassesThrough) {
  ASSERT_TRUE(gateway_->ready());
  WsClientRun run = runWsClient(url(*gateway_), "close");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  // The server got the client's code and reason and answered with the same (RFC 6455 §5.5.1).
  EXPECT_NE(run.output.find("OK close 4000 bye"), std::string::npos) << run.output;
  EXPECT_TRUE(server_->waitForClosed(1));
  EXPECT_NE(server_->process().output().find("closed 4000 bye"), std::string::npos)
      << server_->process().output();
}

TEST_F(WebSocketTest, ServerCloseHandshakePassesThrough) {
  ASSERT_TRUE(gateway_->ready());
  WsClientRun run = runWsClient(url(*gateway_), "server_close");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("OK server_close 4001 server bye"), std::string::npos) << run.output;
}

TEST_F(WebSocketTest, AccessLogLineIsWrittenWhenTheTunnelEnds) {
  std::string log = uniqueTmpPath("tunnel.log");
  auto g = start(*server_, {{"LOG", log}});
  ASSERT_TRUE(g->ready());
  RawConnection conn(g->port());
  ASSERT_TRUE(wsOpen(conn, "/gateway/ws/logged", g->port()));
  ASSERT_TRUE(wsEcho(conn, "twelve bytes"));
  // Nothing is logged while the tunnel is open: the line carries the totals.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(logLines(log).empty()) << readFile(log);
  conn.close();
  auto lines = waitForRequests(log, "/gateway/ws/logged");
  ASSERT_EQ(lines.size(), 1u) << readFile(log);
  EXPECT_EQ(lines[0]["status"], 101);
  EXPECT_EQ(lines[0]["method"], "GET");
  EXPECT_EQ(lines[0]["cluster"], "ws");
  // One masked 12-byte frame up (2 + 4 + 12), one unmasked frame down (2 + 12).
  EXPECT_EQ(lines[0]["bytes_in"], 18);
  EXPECT_EQ(lines[0]["bytes_out"], 14);
}

TEST_F(WebSocketTest, StatsCountActiveAndTotalTunnels) {
  auto g = start(*server_, {});
  ASSERT_TRUE(g->ready());
  {
    RawConnection a(g->port());
    RawConnection b(g->port());
    ASSERT_TRUE(wsOpen(a, "/gateway/ws/a", g->port()));
    ASSERT_TRUE(wsOpen(b, "/gateway/ws/b", g->port()));
    ASSERT_TRUE(wsEcho(a, "a"));
    ASSERT_TRUE(wsEcho(b, "b"));
    auto stats = adminStats(g->adminPort());
    EXPECT_EQ(stats["tunnels_active"], 2u);
    EXPECT_EQ(stats["tunnels_total"], 2u);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (adminStats(g->adminPort())["tunnels_active"] != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto stats = adminStats(g->adminPort());
  EXPECT_EQ(stats["tunnels_active"], 0u);
  EXPECT_EQ(stats["tunnels_total"], 2u);
}

TEST_F(WebSocketTest, ClientGoingAwayMidTunnelClosesTheUpstream) {
  WsEchoServer server;
  auto g = start(server, {});
  ASSERT_TRUE(g->ready());
  RawConnection conn(g->port());
  ASSERT_TRUE(wsOpen(conn, "/gateway/ws/leaving", g->port()));
  ASSERT_TRUE(wsEcho(conn, "still here"));
  conn.close();  // no close frame: the TCP connection just ends
  // The backend sees its connection end without a close frame (1006).
  ASSERT_TRUE(server.waitForClosed(1)) << server.process().output();
  EXPECT_NE(server.process().output().find("closed 1006"), std::string::npos)
      << server.process().output();
}

TEST_F(WebSocketTest, HttpTimeoutsDoNotCutATunnel) {
  // Downstream idle 300 ms and upstream response timeout 300 ms govern HTTP, not tunnels.
  auto g = start(*server_, {{"HTTP_IDLE", "300"}, {"RESPONSE_TIMEOUT", "300"}});
  ASSERT_TRUE(g->ready());
  RawConnection conn(g->port());
  ASSERT_TRUE(wsOpen(conn, "/gateway/ws/quiet", g->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE(wsEcho(conn, "after a quiet while"));
}

TEST_F(WebSocketTest, IdleTunnelIsClosedAfterTunnelIdleTimeout) {
  WsEchoServer server;
  auto g = start(server, {{"LISTENER", "    tunnel_idle_timeout_ms: 1500"}});
  ASSERT_TRUE(g->ready());
  RawConnection conn(g->port());
  ASSERT_TRUE(wsOpen(conn, "/gateway/ws/idle", g->port()));
  // Traffic keeps it open well past the timeout...
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(wsEcho(conn, "tick " + std::to_string(i))) << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  // ...and silence closes both sides (sockets: sluice sends no close frame).
  EXPECT_TRUE(conn.isClosed(10000));
  ASSERT_TRUE(server.waitForClosed(1)) << server.process().output();
  EXPECT_NE(server.process().output().find("closed 1006"), std::string::npos);
}

TEST_F(WebSocketTest, ReloadLeavesAnOpenTunnelWorking) {
  WsEchoServer server;
  std::map<std::string, std::string> v = vars(server, {});
  Gateway g(kConfig, v);
  ASSERT_TRUE(g.ready());
  RawConnection conn(g.port());
  ASSERT_TRUE(wsOpen(conn, "/gateway/ws/long", g.port()));
  ASSERT_TRUE(wsEcho(conn, "before"));

  // New listener settings (upgrades, idle timeout, a filter) and new cluster timeouts.
  v["PORT"] = std::to_string(g.port());
  v["ADMIN"] = std::to_string(g.adminPort());
  v["PLUGINS"] = pluginPathsYaml();
  v["RESPONSE_TIMEOUT"] = "5000";
  v["LISTENER"] =
      "    upgrades: [websocket, other]\n    tunnel_idle_timeout_ms: 600000\n"
      "    filters: [request_id]";
  ASSERT_TRUE(writeFile(g.configPath(), substitute(kConfig, v)));
  Response reload = httpRequest(g.adminPort(), "POST", "/reload");
  ASSERT_EQ(reload.status, 200) << reload.body;

  EXPECT_TRUE(wsEcho(conn, "after the reload"));
  EXPECT_EQ(adminStats(g.adminPort())["tunnels_active"], 1u);
  // New tunnels use the new snapshot.
  RawConnection fresh(g.port());
  ASSERT_TRUE(wsOpen(fresh, "/gateway/ws/new", g.port()));
  EXPECT_TRUE(wsEcho(fresh, "new tunnel"));
  EXPECT_TRUE(wsEcho(conn, "old tunnel still"));
  EXPECT_EQ(server.closedCount(), 0) << server.process().output();
}

TEST_F(WebSocketTest, DrainClosesTunnelsAfterTheDrainTimeout) {
  WsEchoServer server;
  auto g = start(server, {{"DRAIN", "1500"}});
  ASSERT_TRUE(g->ready());
  RawConnection conn(g->port());
  ASSERT_TRUE(wsOpen(conn, "/gateway/ws/draining", g->port()));
  ASSERT_TRUE(wsEcho(conn, "before SIGTERM"));
  ASSERT_TRUE(g->process().signal(SIGTERM));
  // A drain does not cut the tunnel at once...
  EXPECT_TRUE(wsEcho(conn, "while draining"));
  // ...but does not wait for it forever either: closed at the drain timeout, exit 0.
  EXPECT_TRUE(conn.isClosed(15000));
  EXPECT_EQ(g->process().waitExit(15000), 0) << g->process().outputTail();
  ASSERT_TRUE(server.waitForClosed(1)) << server.process().output();
  EXPECT_NE(g->process().output().find("drained: the remaining connections were closed"),
            std::string::npos)
      << g->process().outputTail();
}

// Both legs over TLS: the client speaks wss to a TLS listener, sluice speaks TLS to a wss
// backend. The tunnel does not know either.
TEST(WebSocketTlsTest, MessagesEchoOverTlsDownstreamAndUpstream) {
  TestPki pki;
  CertOptions edge;
  edge.dns = {"edge.test"};
  CertFiles edge_cert = pki.issue("edge", edge);
  CertOptions backend;
  backend.dns = {"backend.test"};
  CertFiles backend_cert = pki.issue("backend", backend);
  WsEchoServer server(backend_cert.cert, backend_cert.key);
  Gateway g(R"(
workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
    tls:
      certificates: [{ cert_chain: ${CERT}, private_key: ${KEY} }]
clusters:
  - name: ws
    endpoints: [${WS}]
    tls: { ca_file: ${CA}, sni: backend.test }
)",
            {{"CERT", edge_cert.cert},
             {"KEY", edge_cert.key},
             {"CA", pki.caFile()},
             {"WS", server.address()}});
  ASSERT_TRUE(g.ready());
  std::string url = "wss://127.0.0.1:" + std::to_string(g.port()) + "/gateway/ws/tls";
  for (const char* scenario : {"echo", "big", "close"}) {
    WsClientRun run = runWsClient(url, scenario, pki.caFile(), "edge.test");
    EXPECT_EQ(run.exit_code, 0) << scenario << ": " << run.output;
    EXPECT_NE(run.output.find(std::string("OK ") + scenario), std::string::npos) << run.output;
  }
}

}  // namespace
}  // namespace sluice::test
