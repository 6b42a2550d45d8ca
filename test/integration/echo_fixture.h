// Fixture shared by tests that need one sluice (one worker, context path /gateway) in front of
// one echo backend named "echo" as cluster "echo", started once per test suite. A suite that
// needs other settings gives its own config (with ${PLUGINS}, ${PORT} and ${BACKEND}) to
// startWith() in its own SetUpTestSuite.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "test/integration/gateway.h"

namespace sluice::test {

class EchoFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { startWith(kDefaultConfig); }
  static void startWith(const char* config) {
    backend_ = std::make_unique<EchoBackend>("echo");
    gateway_ = std::make_unique<Gateway>(
        config, std::map<std::string, std::string>{{"BACKEND", backend_->address()}});
  }
  static constexpr const char* kDefaultConfig = R"(
workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: echo
    endpoints: [${BACKEND}]
)";
  static void TearDownTestSuite() {
    gateway_.reset();
    backend_.reset();
  }
  void SetUp() override { ASSERT_TRUE(gateway_->ready()); }

  static int port() { return gateway_->port(); }
  // A GET request for `path` with a Host header.
  static std::string get(const std::string& path, const Headers& headers = {}) {
    return buildRequest("GET", path, headers, "", port());
  }
  // Reads the next response on `conn` and checks it is a 200 echo of `path` (which starts with
  // "/gateway"): responses must come back in request order.
  static void expectEchoOf(RawConnection& conn, const std::string& path) {
    Response r = conn.readResponse();
    ASSERT_TRUE(r.complete) << path << ": " << r.error;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(echoString(r.body, "path"), path.substr(8)) << "responses out of order";
  }

  static inline std::unique_ptr<EchoBackend> backend_;
  static inline std::unique_ptr<Gateway> gateway_;
};

}  // namespace sluice::test
