// The hand-written URL helpers the Dubbo format uses: percent-decoding and URL parsing.
#include "discovery/zookeeper/url.h"

#include <gtest/gtest.h>

#include "discovery/zookeeper/names.h"

namespace sluice::zookeeper {
namespace {

std::string decode(const std::string& in, bool plus = true) {
  std::string out;
  return percentDecode(in, plus, &out) ? out : "<bad>";
}

TEST(PercentDecodeTest, EscapesAndPlus) {
  EXPECT_EQ(decode("rest%3A%2F%2F10.1.2.3%3A8080%2Fa%3Fx%3D1%26y%3D2"),
            "rest://10.1.2.3:8080/a?x=1&y=2");
  EXPECT_EQ(decode("a+b%2Bc"), "a b+c");
  EXPECT_EQ(decode("a+b", false), "a+b");
  EXPECT_EQ(decode("%2f%2F%7e"), "//~");
  EXPECT_EQ(decode("%252C"), "%2C");  // decoded once, not twice
  EXPECT_EQ(decode(""), "");
  EXPECT_EQ(decode("100%"), "<bad>");
  EXPECT_EQ(decode("%4"), "<bad>");
  EXPECT_EQ(decode("%zz"), "<bad>");
  EXPECT_EQ(decode("%%41"), "<bad>");
}

TEST(ParseUrlTest, DubboProviderUrl) {
  Url u;
  std::string error;
  ASSERT_TRUE(
      parseUrl("REST://10.1.2.3:8080/restapi/com.example.UserService?anyhost=true&"
               "interface=com.example.UserService&methods=get,list&weight=50&empty=&flag",
               &u, &error))
      << error;
  EXPECT_EQ(u.scheme, "rest");
  EXPECT_EQ(u.host, "10.1.2.3");
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.path, "restapi/com.example.UserService");
  EXPECT_EQ(u.param("weight"), "50");
  EXPECT_EQ(u.param("methods"), "get,list");
  EXPECT_EQ(u.param("empty", "x"), "");
  EXPECT_TRUE(u.hasParam("flag"));
  EXPECT_EQ(u.param("nope", "def"), "def");
}

TEST(ParseUrlTest, ShapesAndErrors) {
  Url u;
  std::string error;
  ASSERT_TRUE(parseUrl("rest://[fe80::1]:81", &u, &error)) << error;
  EXPECT_EQ(u.host, "fe80::1");
  EXPECT_EQ(u.port, 81);
  EXPECT_EQ(u.path, "");
  EXPECT_EQ(joinHostPort(u.host, u.port), "[fe80::1]:81");
  ASSERT_TRUE(parseUrl("rest://user:pw@h.example:9/x?", &u, &error)) << error;
  EXPECT_EQ(u.host, "h.example");
  EXPECT_EQ(u.path, "x");
  EXPECT_TRUE(u.params.empty());

  EXPECT_FALSE(parseUrl("10.1.2.3:8080/x", &u, &error));
  EXPECT_EQ(error, "missing 'scheme://'");
  EXPECT_FALSE(parseUrl("rest://10.1.2.3/x", &u, &error));
  EXPECT_EQ(error, "missing port");
  EXPECT_FALSE(parseUrl("rest://10.1.2.3:0/x", &u, &error));
  EXPECT_EQ(error, "bad port '0'");
  EXPECT_FALSE(parseUrl("rest://10.1.2.3:65536/x", &u, &error));
  EXPECT_FALSE(parseUrl("rest://10.1.2.3:80a/x", &u, &error));
  EXPECT_FALSE(parseUrl("rest://:80/x", &u, &error));
  EXPECT_EQ(error, "missing host");
  EXPECT_FALSE(parseUrl("re st://h:1", &u, &error));
  EXPECT_FALSE(parseUrl("rest://[::1:80", &u, &error));
}

TEST(NamesTest, HostPortAndClusterNames) {
  std::string error;
  EXPECT_TRUE(checkHostPort("10.0.0.1:8080", &error));
  EXPECT_TRUE(checkHostPort("backend-1.svc_local:1", &error));
  EXPECT_TRUE(checkHostPort("[::1]:65535", &error));
  EXPECT_FALSE(checkHostPort("10.0.0.1", &error));
  EXPECT_FALSE(checkHostPort("10.0.0.1:", &error));
  EXPECT_FALSE(checkHostPort(":80", &error));
  EXPECT_FALSE(checkHostPort("a b:80", &error));
  EXPECT_FALSE(checkHostPort("h:70000", &error));
  EXPECT_FALSE(checkHostPort("[::1]80", &error));
  EXPECT_TRUE(isClusterName("restapi"));
  EXPECT_TRUE(isClusterName("com.example.User_Service-2"));
  EXPECT_FALSE(isClusterName(""));
  EXPECT_FALSE(isClusterName("a/b"));
  EXPECT_FALSE(isClusterName("Outer$Inner"));
  EXPECT_FALSE(isClusterName(std::string(201, 'a')));
}

}  // namespace
}  // namespace sluice::zookeeper
