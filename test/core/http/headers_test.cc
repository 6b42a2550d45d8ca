#include "core/http/headers.h"

#include <gtest/gtest.h>

namespace sluice::http {
namespace {

TEST(HeaderMapTest, CaseInsensitiveSetRemoveKeepOrder) {
  HeaderMap h;
  h.add("Accept", "a");
  h.add("X-Multi", "1");
  h.add("x-multi", "2");
  h.set("X-MULTI", "3");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h.fields()[1].value, "3");
  EXPECT_EQ(h.remove("ACCEPT"), 1u);
  EXPECT_FALSE(h.has("accept"));
}

TEST(HeaderMapTest, HopByHopAndConnectionNamedFieldsAreStripped) {
  HeaderMap h;
  h.add("Host", "x");
  h.add("Connection", "keep-alive, X-Secret, Host, Authorization");
  h.add("Keep-Alive", "timeout=5");
  h.add("X-Secret", "s");
  h.add("Authorization", "Bearer t");
  h.add("TE", "trailers");
  h.add("Upgrade", "websocket");
  h.add("Proxy-Connection", "keep-alive");
  h.add("X-Kept", "k");
  stripHopByHop(h);
  EXPECT_TRUE(h.has("host"));           // never dropped on a client's word
  EXPECT_TRUE(h.has("authorization"));  // never dropped on a client's word
  EXPECT_TRUE(h.has("x-kept"));
  EXPECT_FALSE(h.has("connection"));
  EXPECT_FALSE(h.has("keep-alive"));
  EXPECT_FALSE(h.has("x-secret"));
  EXPECT_FALSE(h.has("te"));
  EXPECT_FALSE(h.has("upgrade"));
  EXPECT_FALSE(h.has("proxy-connection"));
}

TEST(HeaderMapTest, TokenAndValueSyntax) {
  EXPECT_TRUE(isToken("X-Request-Id"));
  EXPECT_FALSE(isToken(""));
  EXPECT_FALSE(isToken("Bad Name"));
  EXPECT_FALSE(isToken("a:b"));
  EXPECT_TRUE(isFieldValue("a b\tc"));
  EXPECT_FALSE(isFieldValue("a\r\nb"));
  EXPECT_FALSE(isFieldValue(std::string("a\0b", 3)));
  EXPECT_FALSE(isFieldValue(" leading"));
}

TEST(HeaderMapTest, HasTokenLooksIntoLists) {
  HeaderMap h;
  h.add("Connection", "Upgrade,  close");
  EXPECT_TRUE(h.hasToken("connection", "CLOSE"));
  EXPECT_FALSE(h.hasToken("connection", "keep-alive"));
}

}  // namespace
}  // namespace sluice::http
