// Idle TLS keep-alive connections are parked like plain ones (IdleParker, after a second idle):
// the connection object goes, its TLS session stays with the socket. What users rely on: the
// next requests on a parked connection are served over the same session (no new handshake),
// with TLS 1.3 and 1.2; a client that closes a parked connection is noticed; the idle timeout
// still closes one.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "test/integration/tls_fixture.h"

namespace sluice::test {
namespace {

// Longer than IdleParker::kParkAfterMs plus one tick: the connection is parked by then.
constexpr auto kParked = std::chrono::milliseconds(2600);

// One gateway per idle timeout: the timeout test wants a short one; the others a long one, so
// that setting up 300 TLS connections on a loaded machine (6.5 s measured with 14 busy
// processes) cannot run into it.
template <int kIdleTimeoutMs>
class TlsIdleParkFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = std::make_unique<TestPki>();
    backend_ = std::make_unique<EchoBackend>("echo");
    CertOptions a;
    a.dns = {"a.test"};
    a_ = pki_->issue("a", a);
    gateway_ = std::make_unique<Gateway>(
        R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
limits:
  idle_timeout_ms: ${IDLE_TIMEOUT_MS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    tls:
      certificates:
        - { cert_chain: ${A_CERT}, private_key: ${A_KEY} }
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - { prefix: /, cluster: echo }
)",
        std::map<std::string, std::string>{{"BACKEND", backend_->address()},
                                           {"A_CERT", a_.cert},
                                           {"A_KEY", a_.key},
                                           {"IDLE_TIMEOUT_MS", std::to_string(kIdleTimeoutMs)}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
    pki_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static uint64_t stat(const std::string& key) { return adminStats(gateway_->adminPort())[key]; }
  // Polls (generously: a loaded machine) until downstream_cx_active is `n`.
  static bool activeBecomes(uint64_t n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (stat("downstream_cx_active") != n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
  static void expectEcho(RawConnection& conn, const std::string& path) {
    ASSERT_TRUE(conn.send(buildRequest("GET", path, {{"Host", "a.test"}}, "", 0))) << path;
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << path << ": " << r.error;
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_TRUE(r.keep_alive) << path;
    EXPECT_EQ(echoString(r.body, "path"), path);
    EXPECT_EQ(echoHeaderValues(r.body, "X-Forwarded-Proto"), std::vector<std::string>{"https"});
  }

  static inline std::unique_ptr<TestPki> pki_;
  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline CertFiles a_;
};

using TlsIdleParkTest = TlsIdleParkFixture<60000>;
using TlsIdleTimeoutTest = TlsIdleParkFixture<6000>;

TEST_F(TlsIdleParkTest, ParkedConnectionServesItsNextRequestsOnTheSameSession) {
  for (const char* version : {"1.3", "1.2"}) {
    SCOPED_TRACE(version);
    ASSERT_TRUE(activeBecomes(0));
    TlsOptions o = trusting(*pki_, "a.test");
    o.max_version = version;
    RawConnection conn(gateway_->port(), 5000);
    TlsResult tls = conn.startTls(o);
    ASSERT_TRUE(tls.ok) << tls.error;
    expectEcho(conn, "/first");
    const uint64_t handshakes = stat("tls_handshakes_full") + stat("tls_handshakes_resumed");
    std::this_thread::sleep_for(kParked);
    EXPECT_EQ(stat("downstream_cx_active"), 1u) << "parked: still open, counted once";
    expectEcho(conn, "/after/1");
    expectEcho(conn, "/after/2");
    std::this_thread::sleep_for(kParked);  // parked a second time
    // Pipelined on the parked connection: answered in order.
    ASSERT_TRUE(conn.send(buildRequest("GET", "/p1", {{"Host", "a.test"}}, "", 0) +
                          buildRequest("GET", "/p2", {{"Host", "a.test"}}, "", 0)));
    for (const char* path : {"/p1", "/p2"}) {
      Response r = conn.readResponse();
      ASSERT_TRUE(r.complete) << path << ": " << r.error;
      EXPECT_EQ(echoString(r.body, "path"), path);
    }
    EXPECT_EQ(stat("tls_handshakes_full") + stat("tls_handshakes_resumed"), handshakes)
        << "the parked connection kept its session: no new handshake";
  }
}

TEST_F(TlsIdleParkTest, ManyConnectionsWhoseRequestsArriveWhileTheyAreParkedAllServe) {
  // More idle connections than IdleParker::kMaxUnparked: they are parked every kBusyTickMs,
  // while their requests arrive. Parking peeks at the session; a request that came in just
  // then (decrypted into OpenSSL, no longer readable on the socket) must still be read
  // (found by bench/tls: connections of 5,000 hung, then closed).
  constexpr int kConns = 300;
  std::vector<std::unique_ptr<RawConnection>> conns;
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(std::make_unique<RawConnection>(gateway_->port(), 15000));
    ASSERT_TRUE(conns.back()->startTls(trusting(*pki_, "a.test")).ok) << i;
  }
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kConns; ++i) {
      const std::string path = "/r" + std::to_string(round) + "/" + std::to_string(i);
      ASSERT_TRUE(conns[i]->send(buildRequest("GET", path, {{"Host", "a.test"}}, "", 0))) << i;
      if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(7));
    }
    for (int i = 0; i < kConns; ++i) {
      Response r = conns[i]->readResponse();
      ASSERT_TRUE(r.complete) << "round " << round << ", connection " << i << ": " << r.error;
      EXPECT_EQ(echoString(r.body, "path"), "/r" + std::to_string(round) + "/" + std::to_string(i));
    }
  }
}

TEST_F(TlsIdleParkTest, ClientClosingAParkedConnectionIsNoticed) {
  ASSERT_TRUE(activeBecomes(0));
  {
    RawConnection conn(gateway_->port(), 5000);
    TlsResult tls = conn.startTls(trusting(*pki_, "a.test"));
    ASSERT_TRUE(tls.ok) << tls.error;
    expectEcho(conn, "/x");
    std::this_thread::sleep_for(kParked);
    EXPECT_EQ(stat("downstream_cx_active"), 1u);
  }  // closed by the client while parked (close_notify, then FIN)
  EXPECT_TRUE(activeBecomes(0)) << "the client's close of a parked TLS connection went unnoticed";
  RawConnection conn(gateway_->port(), 5000);
  ASSERT_TRUE(conn.startTls(trusting(*pki_, "a.test")).ok);
  expectEcho(conn, "/y");
}

TEST_F(TlsIdleTimeoutTest, ParkedConnectionIsClosedAtTheIdleTimeout) {
  ASSERT_TRUE(activeBecomes(0));
  RawConnection conn(gateway_->port(), 5000);
  ASSERT_TRUE(conn.startTls(trusting(*pki_, "a.test")).ok);
  expectEcho(conn, "/x");
  std::this_thread::sleep_for(kParked);
  EXPECT_FALSE(conn.isClosed(100)) << "parked, not closed";
  EXPECT_TRUE(conn.isClosed(15000)) << "parked TLS connection kept past idle_timeout_ms";
  EXPECT_TRUE(activeBecomes(0));
}

}  // namespace
}  // namespace sluice::test
