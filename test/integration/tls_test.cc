// Downstream TLS through the real binary: certificates chosen by SNI (exact, wildcard,
// default, strict), RSA and ECDSA for one name, versions, ALPN, the handshake timeout,
// plaintext on a TLS port, and large bodies both ways over TLS.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "test/integration/tls_fixture.h"

namespace sluice::test {
namespace {

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = std::make_unique<TestPki>();
    backend_ = std::make_unique<EchoBackend>("echo");
    CertOptions a;
    a.dns = {"a.test", "*.wild.test"};
    a_ = pki_->issue("a", a);
    CertOptions b;
    b.dns = {"b.test"};
    b.key = CertOptions::Key::kRsa2048;
    b_ = pki_->issue("b", b);
    CertOptions same_ec;
    same_ec.dns = {"same.test"};
    same_ec.common_name = "ec.same.test";
    same_ec_ = pki_->issue("same-ec", same_ec);
    CertOptions same_rsa = same_ec;
    same_rsa.common_name = "rsa.same.test";
    same_rsa.key = CertOptions::Key::kRsa2048;
    same_rsa_ = pki_->issue("same-rsa", same_rsa);
    gateway_ = start(false);
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
    pki_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static std::unique_ptr<Gateway> start(bool strict, const std::string& extra = "") {
    return std::make_unique<Gateway>(
        R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    tls:
      strict_sni: ${STRICT}
      handshake_timeout_ms: 500
      certificates:
        - { cert_chain: ${A_CERT}, private_key: ${A_KEY} }
        - { cert_chain: ${B_CERT}, private_key: ${B_KEY} }
        - { cert_chain: ${SE_CERT}, private_key: ${SE_KEY} }
        - { cert_chain: ${SR_CERT}, private_key: ${SR_KEY} }
${EXTRA}
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - { prefix: /, cluster: echo }
)",
        std::map<std::string, std::string>{{"BACKEND", backend_->address()},
                                           {"STRICT", strict ? "true" : "false"},
                                           {"EXTRA", extra},
                                           {"A_CERT", a_.cert},
                                           {"A_KEY", a_.key},
                                           {"B_CERT", b_.cert},
                                           {"B_KEY", b_.key},
                                           {"SE_CERT", same_ec_.cert},
                                           {"SE_KEY", same_ec_.key},
                                           {"SR_CERT", same_rsa_.cert},
                                           {"SR_KEY", same_rsa_.key}});
  }

  static inline std::unique_ptr<TestPki> pki_;
  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline CertFiles a_, b_, same_ec_, same_rsa_;
};

TEST_F(TlsTest, SniChoosesTheCertificateAndRequestsAreProxied) {
  for (const auto& [sni, cn] : std::vector<std::pair<std::string, std::string>>{
           {"a.test", "a.test"}, {"b.test", "b.test"}, {"x.wild.test", "a.test"}}) {
    HttpsExchange ex = httpsRequest(gateway_->port(), trusting(*pki_, sni), "/hello");
    ASSERT_TRUE(ex.tls.ok) << sni << ": " << ex.tls.error;
    EXPECT_EQ(ex.tls.peer_cn, cn) << sni;
    ASSERT_TRUE(ex.response.complete) << ex.response.error;
    EXPECT_EQ(ex.response.status, 200);
    EXPECT_EQ(echoString(ex.response.body, "path"), "/hello");
    EXPECT_EQ(echoHeaderValues(ex.response.body, "X-Forwarded-Proto"),
              std::vector<std::string>{"https"});
  }
}

TEST_F(TlsTest, WildcardCoversExactlyOneLabel) {
  TlsOptions o = trusting(*pki_, "deep.x.wild.test");
  o.ca_file.clear();  // look at the certificate chosen, not at whether it verifies
  HttpsExchange ex = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(ex.tls.ok) << ex.tls.error;
  EXPECT_EQ(ex.tls.peer_cn, "a.test");  // the default: no certificate names it
  o.sni = "wild.test";
  ex = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(ex.tls.ok) << ex.tls.error;
  EXPECT_EQ(ex.tls.peer_cn, "a.test");
}

TEST_F(TlsTest, UnknownOrMissingSniGetsTheDefaultCertificate) {
  TlsOptions o;
  HttpsExchange ex = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(ex.tls.ok) << ex.tls.error;
  EXPECT_EQ(ex.tls.peer_cn, "a.test");
  EXPECT_EQ(ex.response.status, 200);
  o.sni = "nobody.test";
  ex = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(ex.tls.ok) << ex.tls.error;
  EXPECT_EQ(ex.tls.peer_cn, "a.test");
}

TEST_F(TlsTest, StrictSniRefusesNamesWithoutACertificate) {
  auto strict = start(true);
  ASSERT_TRUE(strict->ready());
  TlsOptions o = trusting(*pki_, "nobody.test");
  EXPECT_FALSE(httpsRequest(strict->port(), o, "/").tls.ok);
  o.sni.clear();
  o.ca_file.clear();
  EXPECT_FALSE(httpsRequest(strict->port(), o, "/").tls.ok);
  HttpsExchange ok = httpsRequest(strict->port(), trusting(*pki_, "b.test"), "/");
  ASSERT_TRUE(ok.tls.ok) << ok.tls.error;
  EXPECT_EQ(ok.response.status, 200);
  auto stats = adminStats(strict->adminPort());
  EXPECT_EQ(stats["tls_handshakes_failed_unknown_sni"], 2u);
}

TEST_F(TlsTest, RsaAndEcdsaCertificatesForOneNameFollowTheClient) {
  TlsOptions o = trusting(*pki_, "same.test");
  o.max_version = "1.2";
  o.ciphers = "ECDHE-RSA-AES128-GCM-SHA256";
  HttpsExchange rsa = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(rsa.tls.ok) << rsa.tls.error;
  EXPECT_EQ(rsa.tls.peer_cn, "rsa.same.test");
  o.ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256";
  HttpsExchange ec = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(ec.tls.ok) << ec.tls.error;
  EXPECT_EQ(ec.tls.peer_cn, "ec.same.test");
}

TEST_F(TlsTest, Tls12And13AndAlpnHttp11) {
  TlsOptions o = trusting(*pki_, "a.test");
  o.alpn = {"h2", "http/1.1"};
  HttpsExchange v13 = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(v13.tls.ok) << v13.tls.error;
  EXPECT_EQ(v13.tls.version, "TLSv1.3");
  EXPECT_EQ(v13.tls.alpn, "http/1.1");
  o.max_version = "1.2";
  HttpsExchange v12 = httpsRequest(gateway_->port(), o, "/");
  ASSERT_TRUE(v12.tls.ok) << v12.tls.error;
  EXPECT_EQ(v12.tls.version, "TLSv1.2");
  EXPECT_EQ(v12.response.status, 200);
  o.alpn = {"h2"};  // RFC 7301 §3.2: no common protocol is a fatal alert
  EXPECT_FALSE(httpsRequest(gateway_->port(), o, "/").tls.ok);
}

TEST_F(TlsTest, SilentClientIsCutAfterTheHandshakeTimeout) {
  RawConnection conn(gateway_->port(), 5000);
  ASSERT_TRUE(conn.connected());
  EXPECT_TRUE(conn.isClosed(4000));  // handshake_timeout_ms: 500
}

TEST_F(TlsTest, PlaintextOnATlsPortIsRefusedAndCounted) {
  auto before = adminStats(gateway_->adminPort());
  Exchange ex = exchange(gateway_->port(), "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_TRUE(ex.closed);
  EXPECT_NE(ex.response.status, 200);
  auto after = adminStats(gateway_->adminPort());
  EXPECT_EQ(after["tls_handshakes_failed_protocol"], before["tls_handshakes_failed_protocol"] + 1);
}

TEST_F(TlsTest, LargeBodiesBothWays) {
  RawConnection conn(gateway_->port(), 10000);
  ASSERT_TRUE(conn.startTls(trusting(*pki_, "a.test")).ok);
  const size_t n = 8 * 1024 * 1024 + 17;
  ASSERT_TRUE(conn.send(buildRequest("GET", "/bytes/" + std::to_string(n), {{"Host", "a.test"}})));
  uint32_t hash = fnv1a("");
  ReadOptions ro;
  ro.on_body = [&](std::string_view piece) { hash = fnv1a(piece, hash); };
  Response down = conn.readResponse(ro);
  ASSERT_TRUE(down.complete) << down.error;
  EXPECT_EQ(down.body_length, n);
  EXPECT_EQ(hash, fnv1a(patternBytes(0, n)));
  std::string body = patternBytes(0, 4 * 1024 * 1024 + 3);
  ASSERT_TRUE(conn.send(buildRequest("POST", "/upload", {{"Host", "a.test"}}, body)));
  Response up = conn.readResponse();
  ASSERT_TRUE(up.complete) << up.error;
  EXPECT_EQ(echoNumber(up.body, "body_length"), static_cast<int64_t>(body.size()));
  EXPECT_EQ(echoString(up.body, "body_fnv1a"), hex8(fnv1a(body)));
}

// The value of the sample `name{labels}` in a Prometheus scrape, or -1 when absent.
double sample(const std::string& text, const std::string& series) {
  size_t at = ("\n" + text).find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + series.size() + 1);
}

TEST_F(TlsTest, HandshakesAndCertificateExpiryAreMetrics) {
  auto gw = start(false);
  ASSERT_TRUE(gw->ready());
  ASSERT_TRUE(httpsRequest(gw->port(), trusting(*pki_, "a.test"), "/").tls.ok);
  ASSERT_TRUE(httpsRequest(gw->port(), trusting(*pki_, "b.test"), "/").tls.ok);
  TlsOptions h2_only = trusting(*pki_, "a.test");
  h2_only.alpn = {"h2"};
  EXPECT_FALSE(httpsRequest(gw->port(), h2_only, "/").tls.ok);
  std::string text = httpGet(gw->adminPort(), "/stats/prometheus").body;
  EXPECT_EQ(
      sample(text, R"(sluice_downstream_tls_handshakes_total{listener="edge",result="full"})"), 2);
  EXPECT_EQ(
      sample(text,
             R"(sluice_downstream_tls_handshake_failures_total{listener="edge",reason="alpn"})"),
      1);
  // Issued with 30 days of validity (CertOptions' default), a moment ago.
  double expiry = sample(
      text, "sluice_tls_certificate_expiry_timestamp_seconds{listener=\"edge\",certificate=\"" +
                b_.cert + "\"}");
  double expected = static_cast<double>(time(nullptr)) + 30 * 86400;
  EXPECT_NEAR(expiry, expected, 600) << text;
  if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
    std::string in = uniqueTmpPath("tls-scrape.txt");
    writeFile(in, text);
    EXPECT_EQ(std::system(("promtool check metrics < " + in + " >/dev/null 2>&1").c_str()), 0);
  }
}

}  // namespace
}  // namespace sluice::test
