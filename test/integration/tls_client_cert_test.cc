// Client certificates (mTLS) through the real binary: required and optional verification, the
// verified facts forwarded upstream and client-sent copies removed, 421 for a Host served by
// another certificate, and session resumption (tickets shared by all workers, rotation, and the
// server-side cache).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "test/integration/tls_fixture.h"

namespace sluice::test {
namespace {

class TlsClientCertTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = std::make_unique<TestPki>();
    other_pki_ = std::make_unique<TestPki>("another CA");
    backend_ = std::make_unique<EchoBackend>("echo");
    CertOptions a;
    a.dns = {"a.test"};
    a_ = pki_->issue("a", a);
    CertOptions b;
    b.dns = {"b.test"};
    b_ = pki_->issue("b", b);
    CertOptions client;
    client.client = true;
    client.common_name = "alice";
    client.dns = {"alice.clients.test"};
    client.uris = {"spiffe://sluice.test/alice"};
    client_ = pki_->issue("alice", client);
    stranger_ = other_pki_->issue("mallory", client);
  }
  static void TearDownTestSuite() {
    backend_.reset();
    pki_.reset();
    other_pki_.reset();
  }

  // A sluice whose TLS listener asks for client certificates (`verify`), with `extra` keys
  // under tls:.
  static std::unique_ptr<Gateway> start(const std::string& verify, const std::string& extra = "",
                                        int workers = 1) {
    return std::make_unique<Gateway>(
        R"(
workers: ${WORKERS}
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    tls:
      client_ca: ${CA}
      verify: ${VERIFY}
      certificates:
        - { cert_chain: ${A_CERT}, private_key: ${A_KEY} }
        - { cert_chain: ${B_CERT}, private_key: ${B_KEY} }
${EXTRA}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - { prefix: /, cluster: echo }
)",
        std::map<std::string, std::string>{{"BACKEND", backend_->address()},
                                           {"WORKERS", std::to_string(workers)},
                                           {"VERIFY", verify},
                                           {"EXTRA", extra},
                                           {"CA", pki_->caFile()},
                                           {"A_CERT", a_.cert},
                                           {"A_KEY", a_.key},
                                           {"B_CERT", b_.cert},
                                           {"B_KEY", b_.key}});
  }

  static TlsOptions withClientCert(const CertFiles& cert, const std::string& sni = "a.test") {
    TlsOptions o = trusting(*pki_, sni);
    o.cert_chain = cert.cert;
    o.private_key = cert.key;
    return o;
  }

  static inline std::unique_ptr<TestPki> pki_, other_pki_;
  static inline std::unique_ptr<EchoBackend> backend_;
  static inline CertFiles a_, b_, client_, stranger_;
};

const Headers kSpoofed = {{"X-Client-Cert-Subject", "CN=admin"},
                          {"X-Client-Cert-URI", "spiffe://sluice.test/admin"},
                          {"X-Client-Cert-DNS", "admin.test"},
                          {"X-Client-Cert-SHA256", "00"}};

TEST_F(TlsClientCertTest, RequiredVerificationForwardsTheVerifiedCertificate) {
  auto gw = start("required");
  ASSERT_TRUE(gw->ready());
  HttpsExchange ex = httpsRequest(gw->port(), withClientCert(client_), "/who", kSpoofed);
  ASSERT_TRUE(ex.tls.ok) << ex.tls.error;
  ASSERT_TRUE(ex.response.complete) << ex.response.error;
  ASSERT_EQ(ex.response.status, 200);
  const std::string& body = ex.response.body;
  auto subject = echoHeaderValues(body, "X-Client-Cert-Subject");
  ASSERT_EQ(subject.size(), 1u) << body;
  EXPECT_EQ(subject[0], "CN=alice,O=sluice tests");
  EXPECT_EQ(echoHeaderValues(body, "X-Client-Cert-URI"),
            std::vector<std::string>{"spiffe://sluice.test/alice"});
  EXPECT_EQ(echoHeaderValues(body, "X-Client-Cert-DNS"),
            std::vector<std::string>{"alice.clients.test"});
  auto fp = echoHeaderValues(body, "X-Client-Cert-SHA256");
  ASSERT_EQ(fp.size(), 1u);
  EXPECT_EQ(fp[0].size(), 64u);
  EXPECT_NE(fp[0], "00");
}

// After the connection was parked (idle for over a second, its TLS session kept with the
// socket), the verified facts still go upstream with each request and spoofed copies are still
// removed: they are the handshake's, kept with the session.
TEST_F(TlsClientCertTest, ParkedConnectionStillForwardsTheVerifiedCertificate) {
  auto gw = start("required");
  ASSERT_TRUE(gw->ready());
  RawConnection conn(gw->port(), 5000);
  ASSERT_TRUE(conn.startTls(withClientCert(client_)).ok);
  for (const char* path : {"/before", "/after"}) {
    if (std::string(path) == "/after") std::this_thread::sleep_for(std::chrono::milliseconds(2600));
    Headers headers = kSpoofed;
    headers.emplace_back("Host", "a.test");
    ASSERT_TRUE(conn.send(buildRequest("GET", path, headers, "", 0)));
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << path << ": " << r.error;
    ASSERT_EQ(r.status, 200) << path;
    EXPECT_EQ(echoHeaderValues(r.body, "X-Client-Cert-Subject"),
              std::vector<std::string>{"CN=alice,O=sluice tests"})
        << path;
    EXPECT_EQ(echoHeaderValues(r.body, "X-Client-Cert-URI"),
              std::vector<std::string>{"spiffe://sluice.test/alice"})
        << path;
  }
}

TEST_F(TlsClientCertTest, RequiredVerificationRefusesMissingAndUntrustedCertificates) {
  auto gw = start("required");
  ASSERT_TRUE(gw->ready());
  // TLS 1.3: the client's handshake may finish before the server has checked its certificate;
  // the refusal then arrives instead of the response.
  HttpsExchange none = httpsRequest(gw->port(), trusting(*pki_, "a.test"), "/");
  EXPECT_TRUE(!none.tls.ok || !none.response.complete) << none.response.status;
  HttpsExchange stranger = httpsRequest(gw->port(), withClientCert(stranger_), "/");
  EXPECT_TRUE(!stranger.tls.ok || !stranger.response.complete) << stranger.response.status;
  EXPECT_EQ(statReaching(gw->adminPort(), "tls_handshakes_failed_peer_certificate", 2), 2u);
}

TEST_F(TlsClientCertTest, OptionalVerificationServesAnonymousClientsWithoutIdentity) {
  auto gw = start("optional");
  ASSERT_TRUE(gw->ready());
  HttpsExchange anon = httpsRequest(gw->port(), trusting(*pki_, "a.test"), "/", kSpoofed);
  ASSERT_TRUE(anon.tls.ok) << anon.tls.error;
  ASSERT_EQ(anon.response.status, 200);
  for (const auto& [name, value] : kSpoofed) {
    EXPECT_TRUE(echoHeaderValues(anon.response.body, name).empty()) << name << " was forwarded";
  }
  HttpsExchange alice = httpsRequest(gw->port(), withClientCert(client_), "/");
  ASSERT_EQ(alice.response.status, 200);
  EXPECT_EQ(echoHeaderValues(alice.response.body, "X-Client-Cert-URI"),
            std::vector<std::string>{"spiffe://sluice.test/alice"});
}

TEST_F(TlsClientCertTest, HeaderNamesAreConfigurable) {
  auto gw =
      start("required", R"(      client_cert_headers: { subject: X-Peer, uri_san: "", dns_san: "",
                             fingerprint: "" })");
  ASSERT_TRUE(gw->ready());
  HttpsExchange ex = httpsRequest(gw->port(), withClientCert(client_), "/");
  ASSERT_EQ(ex.response.status, 200);
  EXPECT_EQ(echoHeaderValues(ex.response.body, "X-Peer"),
            std::vector<std::string>{"CN=alice,O=sluice tests"});
  EXPECT_TRUE(echoHeaderValues(ex.response.body, "X-Client-Cert-URI").empty());
}

TEST_F(TlsClientCertTest, HostServedByAnotherCertificateIsMisdirected) {
  auto gw = start("required");
  ASSERT_TRUE(gw->ready());
  HttpsExchange wrong =
      httpsRequest(gw->port(), withClientCert(client_, "a.test"), "/", {{"Host", "b.test"}});
  ASSERT_TRUE(wrong.tls.ok) << wrong.tls.error;
  EXPECT_TRUE(isJsonError(wrong.response, 421));
  HttpsExchange port =
      httpsRequest(gw->port(), withClientCert(client_, "a.test"), "/", {{"Host", "B.test:443"}});
  EXPECT_TRUE(isJsonError(port.response, 421));
  HttpsExchange same =
      httpsRequest(gw->port(), withClientCert(client_, "a.test"), "/", {{"Host", "a.test:443"}});
  EXPECT_EQ(same.response.status, 200);
  HttpsExchange unknown =
      httpsRequest(gw->port(), withClientCert(client_, "a.test"), "/", {{"Host", "other.test"}});
  EXPECT_EQ(unknown.response.status, 200);  // no certificate here serves it: not misdirected
}

// Resumes `n` times with the session of a first connection; returns how many resumed.
int resumptions(int port, const TlsOptions& base, int n) {
  RawConnection first(port, 5000);
  if (!first.startTls(base).ok) return -1;
  first.send(buildRequest("GET", "/", {{"Host", base.sni}}));
  if (first.readResponse().status != 200) return -1;  // TLS 1.3 tickets arrive after Finished
  // Each connection gets a fresh copy of the first session, as a client restoring it from disk
  // would (OpenSSL clients change a session object they resumed with).
  SSL_SESSION* session = first.tlsSession();
  if (session == nullptr) return -1;
  std::string der(static_cast<size_t>(i2d_SSL_SESSION(session, nullptr)), '\0');
  unsigned char* out = reinterpret_cast<unsigned char*>(der.data());
  i2d_SSL_SESSION(session, &out);
  SSL_SESSION_free(session);
  int resumed = 0;
  for (int i = 0; i < n; ++i) {
    const unsigned char* in = reinterpret_cast<const unsigned char*>(der.data());
    SSL_SESSION* copy = d2i_SSL_SESSION(nullptr, &in, static_cast<long>(der.size()));
    TlsOptions o = base;
    o.session = copy;
    RawConnection conn(port, 5000);
    TlsResult r = conn.startTls(o);
    SSL_SESSION_free(copy);
    if (!r.ok) continue;
    conn.send(buildRequest("GET", "/", {{"Host", base.sni}}));
    if (conn.readResponse().status == 200 && r.resumed) ++resumed;
  }
  return resumed;
}

TEST_F(TlsClientCertTest, TicketsResumeOnEveryWorker) {
  auto gw = start("optional", "", 2);
  ASSERT_TRUE(gw->ready());
  TlsOptions o = trusting(*pki_, "a.test");
  EXPECT_EQ(resumptions(gw->port(), o, 12), 12);  // SO_REUSEPORT spreads them over both workers
  o.max_version = "1.2";
  EXPECT_EQ(resumptions(gw->port(), o, 12), 12);
  auto stats = adminStats(gw->adminPort());
  EXPECT_EQ(stats["tls_handshakes_resumed"], 24u);
  EXPECT_EQ(stats["tls_handshakes_full"], 2u);
}

TEST_F(TlsClientCertTest, SessionCacheResumesWithoutTickets) {
  auto gw = start("optional", "      session_tickets: false");
  ASSERT_TRUE(gw->ready());
  TlsOptions o = trusting(*pki_, "a.test");
  o.max_version = "1.2";
  EXPECT_EQ(resumptions(gw->port(), o, 5), 5);
}

TEST_F(TlsClientCertTest, TicketsFromBeforeTwoRotationsAreNotResumed) {
  auto gw = start("optional", "      session_ticket_rotation_s: 1\n      session_cache_size: 0");
  ASSERT_TRUE(gw->ready());
  TlsOptions o = trusting(*pki_, "a.test");
  RawConnection first(gw->port(), 5000);
  ASSERT_TRUE(first.startTls(o).ok);
  first.send(buildRequest("GET", "/", {{"Host", "a.test"}}));
  ASSERT_EQ(first.readResponse().status, 200);
  SSL_SESSION* session = first.tlsSession();
  ASSERT_NE(session, nullptr);
  // Rotation happens when a ticket is issued: handshakes over the next seconds rotate the key
  // twice, after which the first ticket's key is gone.
  for (int i = 0; i < 3; ++i) {
    usleep(1100 * 1000);
    RawConnection c(gw->port(), 5000);
    ASSERT_TRUE(c.startTls(o).ok);
    c.send(buildRequest("GET", "/", {{"Host", "a.test"}}));
    c.readResponse();
  }
  o.session = session;
  RawConnection late(gw->port(), 5000);
  TlsResult r = late.startTls(o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.resumed);
  SSL_SESSION_free(session);
}

}  // namespace
}  // namespace sluice::test
