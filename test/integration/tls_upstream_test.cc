// Upstream TLS through the real binary: one sluice with a plain listener whose clusters speak
// TLS to TLS listeners of the same process (each in front of an echo backend). Verification
// against a CA file, by name or a configured sni, failures as 502 with the reason in the log
// and as connect failures that retry on another host, client certificates, session reuse.
#include <gtest/gtest.h>

#include "test/integration/tls_fixture.h"

namespace sluice::test {
namespace {

class TlsUpstreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = std::make_unique<TestPki>();
    other_pki_ = std::make_unique<TestPki>("another CA");
    backend_ = std::make_unique<EchoBackend>("echo");
    CertOptions a;
    a.dns = {"a.test"};
    a_ = pki_->issue("a", a);
    CertOptions ip;
    ip.ips = {"127.0.0.1"};
    ip.common_name = "loopback";
    ip_ = pki_->issue("ip", ip);
    CertOptions client;
    client.client = true;
    client.common_name = "edge-proxy";
    client_ = pki_->issue("edge", client);
    other_ = other_pki_->issue("a-other", a);
    tls_port_ = freePort();
    mtls_port_ = freePort();
    other_port_ = freePort();
    ip_port_ = freePort();
    gateway_ = std::make_unique<Gateway>(
        R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: front
    address: 127.0.0.1:${PORT}
  - name: tls
    address: 127.0.0.1:${TLS_PORT}
    tls: { certificates: [{ cert_chain: ${A_CERT}, private_key: ${A_KEY} }] }
  - name: mtls
    address: 127.0.0.1:${MTLS_PORT}
    tls:
      certificates: [{ cert_chain: ${A_CERT}, private_key: ${A_KEY} }]
      client_ca: ${CA}
  - name: other
    address: 127.0.0.1:${OTHER_PORT}
    tls: { certificates: [{ cert_chain: ${O_CERT}, private_key: ${O_KEY} }] }
  - name: ip
    address: 127.0.0.1:${IP_PORT}
    tls: { certificates: [{ cert_chain: ${IP_CERT}, private_key: ${IP_KEY} }] }
clusters:
  - name: echo
    endpoints: [${BACKEND}]
  - name: good
    tls: { ca_file: ${CA}, sni: a.test }
    max_idle_connections: 0
    endpoints: [127.0.0.1:${TLS_PORT}]
  - name: by_ip
    tls: { ca_file: ${CA} }
    endpoints: [127.0.0.1:${IP_PORT}]
  - name: wrong_name
    tls: { ca_file: ${CA}, sni: b.test }
    endpoints: [127.0.0.1:${TLS_PORT}]
  - name: untrusted
    tls: { ca_file: ${CA}, sni: a.test }
    retries: 0
    endpoints: [127.0.0.1:${OTHER_PORT}]
  - name: unverified
    tls: { verify: false }
    endpoints: [127.0.0.1:${OTHER_PORT}]
  - name: retried
    tls: { ca_file: ${CA}, sni: a.test }
    retries: 1
    balancer: round_robin
    endpoints: [127.0.0.1:${OTHER_PORT}, 127.0.0.1:${TLS_PORT}]
  - name: mtls_with
    tls: { ca_file: ${CA}, sni: a.test, cert_chain: ${C_CERT}, private_key: ${C_KEY} }
    endpoints: [127.0.0.1:${MTLS_PORT}]
  - name: mtls_without
    tls: { ca_file: ${CA}, sni: a.test }
    retries: 0
    endpoints: [127.0.0.1:${MTLS_PORT}]
routes:
  - { prefix: /via/good/, cluster: good, prefix_rewrite: /inner/ }
  - { prefix: /via/by_ip/, cluster: by_ip, prefix_rewrite: /inner/ }
  - { prefix: /via/wrong_name/, cluster: wrong_name, prefix_rewrite: /inner/ }
  - { prefix: /via/untrusted/, cluster: untrusted, prefix_rewrite: /inner/ }
  - { prefix: /via/unverified/, cluster: unverified, prefix_rewrite: /inner/ }
  - { prefix: /via/retried/, cluster: retried, prefix_rewrite: /inner/ }
  - { prefix: /via/mtls_with/, cluster: mtls_with, prefix_rewrite: /inner/ }
  - { prefix: /via/mtls_without/, cluster: mtls_without, prefix_rewrite: /inner/ }
  - { prefix: /, cluster: echo }
)",
        std::map<std::string, std::string>{{"BACKEND", backend_->address()},
                                           {"CA", pki_->caFile()},
                                           {"TLS_PORT", std::to_string(tls_port_)},
                                           {"MTLS_PORT", std::to_string(mtls_port_)},
                                           {"OTHER_PORT", std::to_string(other_port_)},
                                           {"IP_PORT", std::to_string(ip_port_)},
                                           {"A_CERT", a_.cert},
                                           {"A_KEY", a_.key},
                                           {"O_CERT", other_.cert},
                                           {"O_KEY", other_.key},
                                           {"IP_CERT", ip_.cert},
                                           {"IP_KEY", ip_.key},
                                           {"C_CERT", client_.cert},
                                           {"C_KEY", client_.key}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
    pki_.reset();
    other_pki_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static Response get(const std::string& path) { return httpGet(gateway_->port(), path); }

  static inline std::unique_ptr<TestPki> pki_, other_pki_;
  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
  static inline CertFiles a_, ip_, client_, other_;
  static inline int tls_port_ = 0, mtls_port_ = 0, other_port_ = 0, ip_port_ = 0;
};

TEST_F(TlsUpstreamTest, VerifiedUpstreamByConfiguredSni) {
  Response r = get("/via/good/x");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(echoString(r.body, "path"), "/inner/x");
  // The inner hop was TLS: its listener set the proto.
  EXPECT_EQ(echoHeaderValues(r.body, "X-Forwarded-Proto"), std::vector<std::string>{"https"});
}

TEST_F(TlsUpstreamTest, IpEndpointIsVerifiedAgainstItsIpSan) {
  Response r = get("/via/by_ip/x");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(TlsUpstreamTest, VerificationFailuresAre502WithTheReasonLogged) {
  Response wrong = get("/via/wrong_name/x");
  EXPECT_TRUE(isJsonError(wrong, 502)) << wrong.body;
  Response untrusted = get("/via/untrusted/x");
  EXPECT_TRUE(isJsonError(untrusted, 502)) << untrusted.body;
  EXPECT_NE(untrusted.body.find("certificate verify failed"), std::string::npos) << untrusted.body;
  std::string log = gateway_->process().outputTail();
  EXPECT_NE(log.find("127.0.0.1:" + std::to_string(other_port_)), std::string::npos) << log;
  EXPECT_NE(log.find("certificate verify failed"), std::string::npos) << log;
}

TEST_F(TlsUpstreamTest, VerifyFalseAcceptsAnyCertificate) {
  EXPECT_EQ(get("/via/unverified/x").status, 200);
}

TEST_F(TlsUpstreamTest, VerificationFailureIsAConnectFailureThatRetriesElsewhere) {
  auto before = adminStats(gateway_->adminPort());
  for (int i = 0; i < 6; ++i) {
    Response r = get("/via/retried/x");
    EXPECT_EQ(r.status, 200) << r.body;
  }
  auto after = adminStats(gateway_->adminPort());
  EXPECT_GE(after["upstream_cx_connect_fail"], before["upstream_cx_connect_fail"] + 1);
  EXPECT_GE(after["upstream_rq_retry"], before["upstream_rq_retry"] + 1);
}

TEST_F(TlsUpstreamTest, ClientCertificateForAnMtlsUpstream) {
  EXPECT_EQ(get("/via/mtls_with/x").status, 200);
  Response without = get("/via/mtls_without/x");
  EXPECT_TRUE(without.status == 502 || without.status == 504) << without.status << without.body;
}

TEST_F(TlsUpstreamTest, SessionsAreReusedAcrossConnections) {
  // max_idle_connections: 0 on `good`: every request is a new upstream connection; after the
  // first on each worker, they resume.
  auto before = adminStats(gateway_->adminPort());
  for (int i = 0; i < 10; ++i) ASSERT_EQ(get("/via/good/x").status, 200);
  auto after = adminStats(gateway_->adminPort());
  uint64_t resumed = after["tls_handshakes_resumed"] - before["tls_handshakes_resumed"];
  uint64_t full = after["tls_handshakes_full"] - before["tls_handshakes_full"];
  EXPECT_EQ(resumed + full, 10u);
  EXPECT_GE(resumed, 8u);  // at most one full handshake per worker
}

}  // namespace
}  // namespace sluice::test
