// Upstream keep-alive: sequential requests reuse pooled upstream connections (admin /stats).
#include <gtest/gtest.h>

#include <memory>

#include "test/integration/gateway.h"

namespace sluice::test {
namespace {

constexpr int kWorkers = 2;
constexpr int kEndpoints = 2;

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: pool
    endpoints: [${B0}, ${B1}]
)";

struct TwoBackends {
  TwoBackends() {
    b0 = std::make_unique<EchoBackend>("b0");
    b1 = std::make_unique<EchoBackend>("b1");
    gateway = std::make_unique<Gateway>(
        kConfig, std::map<std::string, std::string>{{"B0", b0->address()}, {"B1", b1->address()}});
  }
  std::unique_ptr<EchoBackend> b0;
  std::unique_ptr<EchoBackend> b1;
  std::unique_ptr<Gateway> gateway;
};

TEST(UpstreamReuseTest, SequentialRequestsReusePooledConnections) {
  TwoBackends setup;
  ASSERT_TRUE(setup.gateway->ready());
  RawConnection conn(setup.gateway->port());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(conn.send(buildRequest("GET", "/gateway/pool/" + std::to_string(i), {}, "", 1)));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    ASSERT_EQ(r.status, 200) << r.body;
  }
  std::map<std::string, uint64_t> stats = adminStats(setup.gateway->adminPort());
  ASSERT_FALSE(stats.empty());
  EXPECT_LE(stats["upstream_cx_total"], static_cast<uint64_t>(kWorkers * kEndpoints + 2));
  EXPECT_GE(stats["upstream_cx_reused"], 90u);
  EXPECT_EQ(stats["downstream_rq_2xx"], 100u);
}

TEST(UpstreamReuseTest, ReuseAcrossDownstreamConnections) {
  // Pools are per worker, not per client connection: short client connections still reuse.
  TwoBackends setup;
  ASSERT_TRUE(setup.gateway->ready());
  for (int i = 0; i < 60; ++i) {
    Response r = httpGet(setup.gateway->port(), "/gateway/pool/" + std::to_string(i));
    ASSERT_TRUE(r.complete) << i << ": " << r.error;
    ASSERT_EQ(r.status, 200);
  }
  std::map<std::string, uint64_t> stats = adminStats(setup.gateway->adminPort());
  EXPECT_LE(stats["upstream_cx_total"], static_cast<uint64_t>(kWorkers * kEndpoints + 2));
  EXPECT_GE(stats["upstream_cx_reused"], 50u);
}

TEST(UpstreamReuseTest, RequestsWithBodiesReuseToo) {
  // Content-Length and chunked request bodies fully sent upstream leave the connection reusable.
  TwoBackends setup;
  ASSERT_TRUE(setup.gateway->ready());
  RawConnection conn(setup.gateway->port());
  for (int i = 0; i < 20; ++i) {
    std::string raw =
        i % 2 == 0
            ? buildRequest("POST", "/gateway/pool/upload", {}, std::string(10000, 'z'), 1)
            : buildRequest("POST", "/gateway/pool/upload", {{"Transfer-Encoding", "chunked"}},
                           "2710\r\n" + std::string(10000, 'z') + "\r\n0\r\n\r\n", 1);
    ASSERT_TRUE(conn.send(raw));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << r.error;
    ASSERT_EQ(echoNumber(r.body, "body_length"), 10000) << i;
  }
  std::map<std::string, uint64_t> stats = adminStats(setup.gateway->adminPort());
  // One client connection lives on one worker: at most one upstream connection per endpoint.
  EXPECT_LE(stats["upstream_cx_total"], static_cast<uint64_t>(kEndpoints));
  EXPECT_GE(stats["upstream_cx_reused"], 18u);
}

}  // namespace
}  // namespace sluice::test
