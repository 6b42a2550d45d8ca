// Fixture for the codec-rule tests (DESIGN.md §6): one sluice with small, explicit limits in
// front of one echo backend, shared by every test of a suite (each test uses fresh connections).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "test/integration/gateway.h"

namespace sluice::test {

class CodecTest : public ::testing::Test {
 protected:
  static constexpr int kMaxRequestLine = 1024;
  static constexpr int kMaxHeaderBytes = 4096;
  static constexpr int kMaxHeaderCount = 20;
  static constexpr int kMaxBody = 1000;

  static void SetUpTestSuite() {
    backend_ = std::make_unique<EchoBackend>("echo");
    gateway_ = std::make_unique<Gateway>(
        R"(
workers: 1
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
limits:
  max_request_line_bytes: 1024
  max_header_bytes: 4096
  max_header_count: 20
  max_request_body_bytes: 1000
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)",
        std::map<std::string, std::string>{{"BACKEND", backend_->address()}});
  }
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static int port() { return gateway_->port(); }

  // Sends `raw` on a new connection and checks that sluice answers `status` with its JSON error
  // body, closes the connection, and (when `never_upstream`) never forwards anything upstream.
  static void expectRejected(const std::string& raw, int status, bool never_upstream = true) {
    int64_t before = upstreamRequests(gateway_->adminPort());
    Exchange e = exchange(port(), raw);
    EXPECT_TRUE(isJsonError(e.response, status)) << "request:\n" << raw;
    EXPECT_EQ(e.response.header("Connection"), "close");
    EXPECT_TRUE(e.closed) << "connection left open after " << e.response.status;
    if (never_upstream) {
      EXPECT_EQ(upstreamRequests(gateway_->adminPort()), before)
          << "a refused request reached the backend";
    }
  }

  // Sends `raw` on a new connection and checks that the backend answered 200.
  static Response expectAccepted(const std::string& raw) {
    Exchange e = exchange(port(), raw, 0);
    EXPECT_TRUE(e.response.complete) << e.response.error << "\nrequest:\n" << raw;
    EXPECT_EQ(e.response.status, 200) << e.response.body << "\nrequest:\n" << raw;
    EXPECT_EQ(e.response.header("X-Backend"), "echo");
    return e.response;
  }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
};

}  // namespace sluice::test
