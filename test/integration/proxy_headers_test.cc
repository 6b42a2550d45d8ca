// What the upstream receives (read back from the echo backend's JSON): hop-by-hop headers gone,
// Host kept, X-Forwarded-For appended, X-Forwarded-Proto set, method and body unchanged.
#include <gtest/gtest.h>

#include "test/integration/echo_fixture.h"

namespace sluice::test {
namespace {

class ProxyHeadersTest : public EchoFixture {
 protected:
  // Sends one request with `headers` on a keep-alive connection and returns the echo body.
  static std::string upstreamView(const Headers& headers, const std::string& method = "GET",
                                  const std::string& body = "") {
    RawConnection conn(gateway_->port());
    EXPECT_TRUE(
        conn.send(buildRequest(method, "/gateway/echo/h", headers, body, gateway_->port())));
    Response r = conn.readResponse();
    EXPECT_TRUE(r.complete) << r.error;
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.header("X-Backend"), "echo");
    return r.body;
  }
};

TEST_F(ProxyHeadersTest, HopByHopRequestHeadersAreStripped) {
  std::string body = upstreamView({{"Connection", "keep-alive, X-Custom-Hop"},
                                   {"Keep-Alive", "timeout=5"},
                                   {"TE", "trailers"},
                                   {"Upgrade", "websocket"},
                                   {"Proxy-Connection", "keep-alive"},
                                   {"X-Custom-Hop", "secret"},
                                   {"X-End-To-End", "kept"}});
  for (const char* name :
       {"Connection", "Keep-Alive", "TE", "Upgrade", "Proxy-Connection", "X-Custom-Hop"}) {
    EXPECT_TRUE(echoHeaderValues(body, name).empty()) << name << " reached the backend:\n" << body;
  }
  EXPECT_EQ(echoHeaderValues(body, "X-End-To-End"), std::vector<std::string>{"kept"});
}

TEST_F(ProxyHeadersTest, HeadersNamedInSeveralConnectionFieldsAreStripped) {
  std::string body = upstreamView({{"Connection", "X-One"},
                                   {"Connection", " x-two ,X-THREE"},
                                   {"X-One", "1"},
                                   {"X-Two", "2"},
                                   {"X-Three", "3"},
                                   {"X-Four", "4"}});
  for (const char* name : {"X-One", "X-Two", "X-Three"}) {
    EXPECT_TRUE(echoHeaderValues(body, name).empty()) << name << " reached the backend";
  }
  EXPECT_EQ(echoHeaderValues(body, "X-Four"), std::vector<std::string>{"4"});
}

TEST_F(ProxyHeadersTest, ConnectionCannotStripHostAuthorizationOrContentLength) {
  std::string body = upstreamView({{"Host", "api.example.test"},
                                   {"Authorization", "Bearer t"},
                                   {"Connection", "Host, Authorization, Content-Length"}},
                                  "POST", "abc");
  EXPECT_EQ(echoNumber(body, "body_length"), 3);
  EXPECT_EQ(echoHeaderValues(body, "Host"), std::vector<std::string>{"api.example.test"});
  EXPECT_EQ(echoHeaderValues(body, "Authorization"), std::vector<std::string>{"Bearer t"});
}

TEST_F(ProxyHeadersTest, HostIsKept) {
  std::string body = upstreamView({{"Host", "api.example.test:8443"}});
  EXPECT_EQ(echoHeaderValues(body, "Host"), std::vector<std::string>{"api.example.test:8443"});
}

TEST_F(ProxyHeadersTest, Http10RequestWithoutHostGetsOneUpstream) {
  // The upstream hop is HTTP/1.1, which requires a Host.
  RawConnection conn(port());
  ASSERT_TRUE(conn.send("GET /gateway/echo/old HTTP/1.0\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(echoString(r.body, "version"), "HTTP/1.1");
  EXPECT_EQ(echoHeaderValues(r.body, "Host").size(), 1u) << r.body;
}

TEST_F(ProxyHeadersTest, AbsoluteFormTargetSetsHost) {
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send("GET http://a.example.test/gateway/echo/abs HTTP/1.1\r\n"
                "Host: b.example.test\r\n\r\n"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_EQ(echoHeaderValues(r.body, "Host"), std::vector<std::string>{"a.example.test"});
}

TEST_F(ProxyHeadersTest, XForwardedForIsAddedWithTheClientIp) {
  std::string body = upstreamView({});
  EXPECT_EQ(echoHeaderValues(body, "X-Forwarded-For"), std::vector<std::string>{"127.0.0.1"});
}

TEST_F(ProxyHeadersTest, XForwardedForKeepsTheExistingChain) {
  std::string body = upstreamView({{"X-Forwarded-For", "203.0.113.7"}});
  EXPECT_EQ(echoHeaderValues(body, "X-Forwarded-For"),
            std::vector<std::string>{"203.0.113.7, 127.0.0.1"});

  std::string two = upstreamView(
      {{"X-Forwarded-For", "203.0.113.7, 198.51.100.2"}, {"X-Forwarded-For", "192.0.2.9"}});
  EXPECT_EQ(echoHeaderValues(two, "X-Forwarded-For"),
            std::vector<std::string>{"203.0.113.7, 198.51.100.2, 192.0.2.9, 127.0.0.1"});
}

TEST_F(ProxyHeadersTest, XForwardedForCannotBeStrippedThroughConnection) {
  std::string body =
      upstreamView({{"X-Forwarded-For", "203.0.113.7"}, {"Connection", "X-Forwarded-For"}});
  EXPECT_EQ(echoHeaderValues(body, "X-Forwarded-For"),
            std::vector<std::string>{"203.0.113.7, 127.0.0.1"});
}

TEST_F(ProxyHeadersTest, EmptyXForwardedForIsNotKeptAsAnEmptyElement) {
  std::string body = upstreamView({{"X-Forwarded-For", ""}});
  EXPECT_EQ(echoHeaderValues(body, "X-Forwarded-For"), std::vector<std::string>{"127.0.0.1"});
}

TEST_F(ProxyHeadersTest, XForwardedProtoIsSet) {
  EXPECT_EQ(echoHeaderValues(upstreamView({}), "X-Forwarded-Proto"),
            std::vector<std::string>{"http"});
  // A client cannot claim https on a plain-text listener.
  EXPECT_EQ(echoHeaderValues(upstreamView({{"X-Forwarded-Proto", "https"}}), "X-Forwarded-Proto"),
            std::vector<std::string>{"http"});
}

TEST_F(ProxyHeadersTest, MethodBodyAndEndToEndHeadersAreForwarded) {
  std::string payload = "{\"name\": \"sluice\"}";
  std::string body = upstreamView(
      {{"Content-Type", "application/json"}, {"X-A", "1"}, {"X-A", "2"}}, "PUT", payload);
  EXPECT_EQ(echoString(body, "method"), "PUT");
  EXPECT_EQ(echoNumber(body, "body_length"), static_cast<int64_t>(payload.size()));
  EXPECT_EQ(echoString(body, "body_fnv1a"), hex8(fnv1a(payload)));
  EXPECT_EQ(echoHeaderValues(body, "Content-Type"), std::vector<std::string>{"application/json"});
  EXPECT_EQ(echoHeaderValues(body, "X-A"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(echoString(body, "version"), "HTTP/1.1");
}

TEST_F(ProxyHeadersTest, ExpectHeaderIsNotForwarded) {
  // sluice answers 100-continue itself; the upstream gets a plain request.
  RawConnection conn(gateway_->port());
  ASSERT_TRUE(conn.send(buildRequest("POST", "/gateway/echo/upload",
                                     {{"Expect", "100-continue"}, {"Content-Length", "3"}}, "",
                                     gateway_->port())));
  Response interim = conn.readResponse();
  ASSERT_EQ(interim.status, 100) << interim.error;
  ASSERT_TRUE(conn.send("abc"));
  Response r = conn.readResponse();
  ASSERT_TRUE(r.complete) << r.error;
  EXPECT_TRUE(echoHeaderValues(r.body, "Expect").empty()) << r.body;
}

}  // namespace
}  // namespace sluice::test
