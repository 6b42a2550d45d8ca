// TLS configuration refused or warned about, as an operator sees it from `--validate` and from
// a reload: the file, the line and the reason; the running certificates keep serving while a
// bad one is refused, a good new one applies to new connections (on SIGHUP and when the files
// change on disk, Kubernetes-style symlink swaps included), and existing connections go on.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "test/integration/tls_fixture.h"

namespace sluice::test {
namespace {

int runSluice(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv{runfile("core/sluice")};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv);
  int code = p.waitExit(20000);
  *out = p.output();
  return code;
}

// A listener config with one certificate and `extra` lines under tls:.
std::string listenerYaml(const std::string& cert, const std::string& key,
                         const std::string& extra = "") {
  return "listeners:\n"
         "  - name: edge\n"
         "    address: 127.0.0.1:" +
         std::to_string(freePort()) +
         "\n"
         "    tls:\n" +
         extra +
         "      certificates:\n"
         "        - { cert_chain: " +
         cert + ", private_key: " + key + " }\n";
}

int validate(const std::string& yaml, std::string* out, std::string* path) {
  TempConfig config(yaml, "tls.yaml");
  *path = config.path();
  return runSluice({"--validate", "-c", config.path()}, out);
}

class TlsConfigTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = std::make_unique<TestPki>();
    CertOptions a;
    a.dns = {"a.test"};
    a_ = pki_->issue("a", a);
    CertOptions b;
    b.dns = {"b.test"};
    b_ = pki_->issue("b", b);
    CertOptions expired = a;
    expired.valid_from_s = -10 * 86400;
    expired.valid_until_s = -86400;
    expired_ = pki_->issue("expired", expired);
    CertOptions future = a;
    future.valid_from_s = 86400;
    future_ = pki_->issue("future", future);
  }
  static inline std::unique_ptr<TestPki> pki_;
  static inline CertFiles a_, b_, expired_, future_;
};

TEST_F(TlsConfigTest, GoodCertificateValidates) {
  std::string out, path;
  EXPECT_EQ(validate(listenerYaml(a_.cert, a_.key), &out, &path), 0) << out;
  EXPECT_NE(out.find("OK"), std::string::npos) << out;
}

TEST_F(TlsConfigTest, MissingFileIsRefusedWithFileLineAndReason) {
  std::string out, path;
  EXPECT_EQ(validate(listenerYaml("/nonexistent/cert.pem", a_.key), &out, &path), 1);
  EXPECT_NE(out.find(path + ":6:11: listener 'edge': tls cert_chain"), std::string::npos) << out;
  EXPECT_NE(out.find("/nonexistent/cert.pem"), std::string::npos) << out;
  EXPECT_NE(out.find("No such file"), std::string::npos) << out;
}

TEST_F(TlsConfigTest, BadPemIsRefused) {
  std::string bad = uniqueTmpPath("bad.pem");
  writeFile(bad, "-----BEGIN CERTIFICATE-----\nnot base64 at all!!\n-----END CERTIFICATE-----\n");
  std::string out, path;
  EXPECT_EQ(validate(listenerYaml(bad, a_.key), &out, &path), 1);
  EXPECT_NE(out.find(bad), std::string::npos) << out;
  EXPECT_NE(out.find("bad PEM"), std::string::npos) << out;
  std::string empty = uniqueTmpPath("empty.pem");
  writeFile(empty, "just text\n");
  EXPECT_EQ(validate(listenerYaml(empty, a_.key), &out, &path), 1);
  EXPECT_NE(out.find("no PEM certificate"), std::string::npos) << out;
}

TEST_F(TlsConfigTest, KeyThatDoesNotMatchIsRefused) {
  std::string out, path;
  EXPECT_EQ(validate(listenerYaml(a_.cert, b_.key), &out, &path), 1);
  EXPECT_NE(out.find("does not match the certificate in " + a_.cert), std::string::npos) << out;
}

TEST_F(TlsConfigTest, ExpiredAndNotYetValidCertificatesWarnOrAreRefused) {
  std::string out, path;
  EXPECT_EQ(validate(listenerYaml(expired_.cert, expired_.key), &out, &path), 0) << out;
  EXPECT_NE(out.find("WARN"), std::string::npos) << out;
  EXPECT_NE(out.find(expired_.cert + " expired on"), std::string::npos) << out;
  EXPECT_EQ(validate(listenerYaml(future_.cert, future_.key), &out, &path), 0) << out;
  EXPECT_NE(out.find("is not valid before"), std::string::npos) << out;
  EXPECT_EQ(validate(listenerYaml(expired_.cert, expired_.key, "      refuse_expired: true\n"),
                     &out, &path),
            1);
  EXPECT_NE(out.find("refuse_expired"), std::string::npos) << out;
}

TEST_F(TlsConfigTest, BadSettingsAreRefused) {
  std::string out, path;
  EXPECT_EQ(validate(listenerYaml(a_.cert, a_.key, "      min_version: \"1.1\"\n"), &out, &path),
            1);
  EXPECT_NE(out.find("older TLS versions are not supported"), std::string::npos) << out;
  EXPECT_EQ(validate(listenerYaml(a_.cert, a_.key, "      ciphers: NO-SUCH-CIPHER\n"), &out, &path),
            1);
  EXPECT_NE(out.find("ciphers 'NO-SUCH-CIPHER'"), std::string::npos) << out;
  EXPECT_EQ(validate(listenerYaml(a_.cert, a_.key, "      verify: required\n"), &out, &path), 1);
  EXPECT_NE(out.find("client certificates need client_ca"), std::string::npos) << out;
  EXPECT_EQ(validate(listenerYaml(a_.cert, a_.key, "      alpn: [h2]\n"), &out, &path), 1);
  EXPECT_NE(out.find("unsupported protocol 'h2'"), std::string::npos) << out;
  EXPECT_EQ(validate(listenerYaml(a_.cert, a_.key, "      client_ca: /nonexistent/ca.pem\n"), &out,
                     &path),
            1);
  EXPECT_NE(out.find("/nonexistent/ca.pem"), std::string::npos) << out;
}

TEST_F(TlsConfigTest, ClusterTlsFilesAreChecked) {
  std::string out, path;
  std::string yaml =
      "clusters:\n  - name: up\n    tls: { ca_file: /nonexistent/ca.pem }\n"
      "    endpoints: [127.0.0.1:1]\n" +
      listenerYaml(a_.cert, a_.key);
  EXPECT_EQ(validate(yaml, &out, &path), 1);
  EXPECT_NE(out.find(path + ":3:"), std::string::npos) << out;
  EXPECT_NE(out.find("cluster 'up': tls ca_file /nonexistent/ca.pem"), std::string::npos) << out;
}

// ---- reloads

class TlsReloadTest : public TlsConfigTest {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<EchoBackend>("echo");
    dir_ = uniqueTmpPath("certs");
    std::filesystem::create_directories(dir_);
    install(a_);
  }
  // Copies `cert` into the served files (new files renamed over the old ones).
  void install(const CertFiles& cert) {
    writeFile(dir_ + "/tls.crt", readFile(cert.cert));
    writeFile(dir_ + "/tls.key", readFile(cert.key));
  }
  std::unique_ptr<Gateway> start() {
    return std::make_unique<Gateway>(
        R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    tls:
      certificates: [{ cert_chain: ${DIR}/tls.crt, private_key: ${DIR}/tls.key }]
clusters:
  - name: echo
    endpoints: [${BACKEND}]
routes:
  - { prefix: /, cluster: echo }
)",
        std::map<std::string, std::string>{{"BACKEND", backend_->address()}, {"DIR", dir_}});
  }
  // The CN the listener presents now.
  std::string servedCn(int port) {
    TlsOptions o;
    o.sni = "a.test";
    RawConnection conn(port, 5000);
    return conn.startTls(o).peer_cn;
  }
  // Waits up to `ms` for the served CN to become `cn`.
  bool waitForCn(int port, const std::string& cn, int ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      if (servedCn(port) == cn) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::unique_ptr<EchoBackend> backend_;
  std::string dir_;
};

TEST_F(TlsReloadTest, ChangedFilesApplyToNewConnectionsWithoutDroppingOldOnes) {
  auto gw = start();
  ASSERT_TRUE(gw->ready());
  ASSERT_EQ(servedCn(gw->port()), "a.test");
  RawConnection kept(gw->port(), 5000);
  ASSERT_TRUE(kept.startTls(TlsOptions{}).ok);
  ASSERT_TRUE(kept.send(buildRequest("GET", "/1", {{"Host", "a.test"}})));
  ASSERT_EQ(kept.readResponse().status, 200);

  install(b_);  // no SIGHUP: the directory watch picks it up
  EXPECT_TRUE(waitForCn(gw->port(), "b.test", 5000));
  ASSERT_TRUE(kept.send(buildRequest("GET", "/2", {{"Host", "a.test"}})));
  Response r = kept.readResponse();
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_GE(adminStats(gw->adminPort())["reloads_ok"], 1u);
}

TEST_F(TlsReloadTest, KubernetesSecretSymlinkSwapIsFollowed) {
  // kubelet's layout: tls.crt → ..data/tls.crt, ..data → ..2026_01_01_v1 (swapped by rename).
  std::string v1 = dir_ + "/..v1", v2 = dir_ + "/..v2";
  std::filesystem::create_directories(v1);
  std::filesystem::create_directories(v2);
  writeFile(v1 + "/tls.crt", readFile(a_.cert));
  writeFile(v1 + "/tls.key", readFile(a_.key));
  writeFile(v2 + "/tls.crt", readFile(b_.cert));
  writeFile(v2 + "/tls.key", readFile(b_.key));
  std::filesystem::remove(dir_ + "/tls.crt");
  std::filesystem::remove(dir_ + "/tls.key");
  std::filesystem::create_directory_symlink("..v1", dir_ + "/..data");
  std::filesystem::create_symlink("..data/tls.crt", dir_ + "/tls.crt");
  std::filesystem::create_symlink("..data/tls.key", dir_ + "/tls.key");
  auto gw = start();
  ASSERT_TRUE(gw->ready());
  ASSERT_EQ(servedCn(gw->port()), "a.test");
  std::filesystem::create_directory_symlink("..v2", dir_ + "/..data_tmp");
  std::filesystem::rename(dir_ + "/..data_tmp", dir_ + "/..data");
  EXPECT_TRUE(waitForCn(gw->port(), "b.test", 5000));
}

TEST_F(TlsReloadTest, BadNewFilesAreRefusedAndTheOldCertificateKeepsServing) {
  auto gw = start();
  ASSERT_TRUE(gw->ready());
  writeFile(dir_ + "/tls.key", readFile(b_.key));  // a.test's cert with b.test's key
  ASSERT_TRUE(gw->process().waitForOutput("does not match", 5000)) << gw->process().outputTail();
  EXPECT_EQ(servedCn(gw->port()), "a.test");
  ASSERT_TRUE(gw->process().signal(SIGHUP));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(servedCn(gw->port()), "a.test");
  EXPECT_GE(adminStats(gw->adminPort())["reloads_failed"], 2u);
  writeFile(dir_ + "/tls.key", readFile(a_.key));  // fixed: nothing changes, still serving
  HttpsExchange ex = httpsRequest(gw->port(), TlsOptions{}, "/");
  EXPECT_EQ(ex.response.status, 200);
}

}  // namespace
}  // namespace sluice::test
