#include "core/config/address.h"

#include <gtest/gtest.h>

namespace sluice::config {
namespace {

TEST(SplitHostPort, AcceptedForms) {
  std::string host;
  uint16_t port = 0;
  ASSERT_TRUE(splitHostPort("127.0.0.1:8080", &host, &port, nullptr));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 8080);
  ASSERT_TRUE(splitHostPort("backend-1.svc_local:1", &host, &port, nullptr));
  EXPECT_EQ(host, "backend-1.svc_local");
  EXPECT_EQ(port, 1);
  ASSERT_TRUE(splitHostPort("[::1]:65535", &host, &port, nullptr));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 65535);
  ASSERT_TRUE(splitHostPort("[2001:db8::7]:443", &host, &port, nullptr));
  EXPECT_EQ(host, "2001:db8::7");
}

TEST(SplitHostPort, Rejections) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty address"},
      {"localhost", "missing port"},
      {"localhost:", "missing port"},
      {":80", "missing host"},
      {"h:0", "invalid port '0'"},
      {"h:65536", "invalid port '65536'"},
      {"h:080x", "invalid port"},
      {"h:+80", "invalid port"},
      {"::1:80", "must be written in brackets"},
      {"[::1]", "missing port"},
      {"[::1:80", "missing ']'"},
      {"[nothex]:80", "invalid IPv6 address"},
      {"1.2.3.256:80", "invalid IPv4 address"},
      {"a b:80", "invalid character ' '"},
      {"a..b:80", "invalid host name"},
      {"-a:80", "invalid host name"},
  };
  for (const auto& [address, reason] : cases) {
    std::string error;
    EXPECT_FALSE(splitHostPort(address, nullptr, nullptr, &error)) << address;
    EXPECT_NE(error.find(reason), std::string::npos) << address << " → " << error;
  }
}

}  // namespace
}  // namespace sluice::config
