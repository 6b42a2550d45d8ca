#include "core/proxy/hash_key.h"

#include <gtest/gtest.h>

namespace sluice::proxy {
namespace {

http::MessageHead request() {
  http::MessageHead h;
  h.method = "GET";
  h.target = "/a/b?user=42&x=&y";
  h.headers.add("X-User", "alice");
  h.headers.add("Cookie", "theme=dark; sid=abc123");
  return h;
}

config::HashKey policy(config::HashKey::Source s, std::string name = "") {
  config::HashKey k;
  k.source = s;
  k.name = std::move(name);
  return k;
}

TEST(HashKeyTest, EachSource) {
  using S = config::HashKey::Source;
  const auto r = request();
  EXPECT_EQ(hashKey(policy(S::kNone), r, "10.0.0.1"), "");
  EXPECT_EQ(hashKey(policy(S::kHeader, "x-user"), r, "10.0.0.1"), "alice");
  EXPECT_EQ(hashKey(policy(S::kHeader, "x-missing"), r, "10.0.0.1"), "");
  EXPECT_EQ(hashKey(policy(S::kCookie, "sid"), r, "10.0.0.1"), "abc123");
  EXPECT_EQ(hashKey(policy(S::kCookie, "si"), r, "10.0.0.1"), "");
  EXPECT_EQ(hashKey(policy(S::kQuery, "user"), r, "10.0.0.1"), "42");
  EXPECT_EQ(hashKey(policy(S::kQuery, "x"), r, "10.0.0.1"), "");
  EXPECT_EQ(hashKey(policy(S::kQuery, "use"), r, "10.0.0.1"), "");
  EXPECT_EQ(hashKey(policy(S::kClientIp), r, "10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(hashKey(policy(S::kPath), r, "10.0.0.1"), "/a/b");
}

}  // namespace
}  // namespace sluice::proxy
