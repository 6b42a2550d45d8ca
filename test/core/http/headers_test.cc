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

// The word-at-a-time scan agrees with the byte rule (no CTL but HTAB, no DEL) for every byte at
// every position of values longer than one word, and at their ends.
TEST(HeaderMapTest, FieldValueEveryByteEveryPosition) {
  for (size_t len : {1u, 7u, 8u, 9u, 17u, 40u}) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int c = 0; c < 256; ++c) {
        std::string v(len, 'a');
        v[pos] = static_cast<char>(c);
        bool byte_ok = (c >= 0x20 && c != 0x7f) || c == '\t';
        bool edge_ws = (pos == 0 || pos == len - 1) && (c == ' ' || c == '\t');
        EXPECT_EQ(isFieldValue(v), byte_ok && !edge_ws)
            << "len " << len << " pos " << pos << " byte " << c;
      }
    }
  }
  EXPECT_TRUE(isFieldValue("a\tb\tc\td\te\tf\tg\th\ti"));
  EXPECT_FALSE(isFieldValue("a\tb\tc\td\te\tf\tg\th\x7f"));
  EXPECT_TRUE(isFieldValue("caf\xc3\xa9 \xff\x80\x80\x80\x80\x80\x80"));  // obs-text
}

// The four-at-a-time scan agrees with the tchar rule (RFC 9110 §5.6.2) for every byte at every
// position.
TEST(HeaderMapTest, TokenEveryByteEveryPosition) {
  const std::string tchar_other = "!#$%&'*+-.^_`|~";
  for (size_t len : {1u, 3u, 4u, 5u, 12u, 17u}) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int c = 0; c < 256; ++c) {
        std::string name(len, 'a');
        name[pos] = static_cast<char>(c);
        const bool tchar = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                           (c >= 'A' && c <= 'Z') ||
                           (c != 0 && tchar_other.find(static_cast<char>(c)) != std::string::npos);
        EXPECT_EQ(isToken(name), tchar) << "len " << len << " pos " << pos << " byte " << c;
      }
    }
  }
}

TEST(HeaderMapTest, HasTokenLooksIntoLists) {
  HeaderMap h;
  h.add("Connection", "Upgrade,  close");
  EXPECT_TRUE(h.hasToken("connection", "CLOSE"));
  EXPECT_FALSE(h.hasToken("connection", "keep-alive"));
}

}  // namespace
}  // namespace sluice::http
