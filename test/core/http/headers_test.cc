#include "core/http/headers.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

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

TEST(HeaderMapTest, ReservedVectorsOfDestroyedMapsAreReusedOnTheirThread) {
  const HeaderField* storage = nullptr;
  {
    HeaderMap a;
    a.reserve();
    a.add("Host", "x");
    a.add("X-Long-Enough-To-Allocate", std::string(100, 'v'));
    storage = a.fields().data();
  }
  HeaderMap b;
  b.reserve();
  EXPECT_EQ(b.fields().data(), storage);  // the spare, emptied
  EXPECT_EQ(b.size(), 0u);
  EXPECT_GE(b.fields().capacity(), HeaderMap::kReservedFields);
  b.add("Host", "y");
  EXPECT_EQ(*b.get(HeaderId::kHost), "y");
  HeaderMap grown;  // past the reserved size: freed as usual, never handed out again
  grown.reserve();
  for (size_t i = 0; i <= HeaderMap::kReservedFields; ++i) grown.add("X", "1");
  HeaderMap moved(std::move(grown));
  EXPECT_EQ(moved.size(), HeaderMap::kReservedFields + 1);
}

TEST(HeaderMapTest, AddingAFieldCopiedFromTheMapItselfIsSafeWhenTheVectorGrows) {
  for (size_t fill = 1; fill <= HeaderMap::kReservedFields + 1; ++fill) {
    HeaderMap h;
    h.reserve();
    for (size_t i = 0; i < fill; ++i) h.add("X-Orig-" + std::to_string(i), std::string(40, 'v'));
    const std::string_view* v = h.get("x-orig-0");
    h.add(h.fields()[0].name, *v);  // views into the map's own storage
    ASSERT_EQ(h.count("x-orig-0"), 2u);
    EXPECT_EQ(*h.get("X-Orig-0", 1), std::string(40, 'v'));
    h.set("X-Copy", *h.get("x-orig-0"));
    EXPECT_EQ(*h.get("x-copy"), std::string(40, 'v'));
  }
}

TEST(HeaderMapTest, InternedNamesInAnyCaseAndNearMisses) {
  for (size_t i = 1; i < static_cast<size_t>(HeaderId::kCount); ++i) {
    const auto id = static_cast<HeaderId>(i);
    std::string name(headerIdName(id));
    ASSERT_FALSE(name.empty()) << i;
    EXPECT_EQ(headerId(name), id) << name;
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    EXPECT_EQ(headerId(upper), id) << upper;
    EXPECT_EQ(headerId(headerIdSpelling(id)), id) << headerIdSpelling(id);
    EXPECT_EQ(headerId(name + "x"), HeaderId::kOther) << name;
    EXPECT_EQ(headerId(name.substr(0, name.size() - 1)), HeaderId::kOther) << name;
    std::string changed = name;
    changed.back() = changed.back() == 'z' ? 'y' : 'z';
    EXPECT_EQ(headerId(changed), HeaderId::kOther) << changed;
  }
  EXPECT_EQ(headerId("Content-Length"), HeaderId::kContentLength);
  EXPECT_EQ(headerId(""), HeaderId::kOther);
  EXPECT_EQ(headerId("X-Custom"), HeaderId::kOther);
  EXPECT_EQ(headerId("content_length"), HeaderId::kOther);
  EXPECT_EQ(headerId("content\rlength"), HeaderId::kOther);  // '-' differs from CR by 0x20 only
  EXPECT_EQ(headerId("x-request\x09id"), HeaderId::kOther);
  EXPECT_EQ(headerId("TE"), HeaderId::kTe);
  EXPECT_EQ(headerId("t\x05"), HeaderId::kOther);
  EXPECT_EQ(headerId("a-very-long-field-name-indeed"), HeaderId::kOther);
  EXPECT_EQ(headerIdName(HeaderId::kOther), "");
}

TEST(HeaderMapTest, InternedAndOtherNamesLookUpAlike) {
  HeaderMap h;
  h.add("HOST", "a");
  h.add("X-Custom", "1");
  h.add("x-custom", "2");
  h.add("Content-Length", "5");
  EXPECT_EQ(h.fields()[0].id, HeaderId::kHost);
  EXPECT_EQ(h.fields()[1].id, HeaderId::kOther);
  EXPECT_EQ(*h.get("host"), "a");
  EXPECT_EQ(*h.get(HeaderId::kHost), "a");
  EXPECT_EQ(*h.get("X-CUSTOM", 1), "2");
  EXPECT_EQ(h.get("x-custom", 2), nullptr);
  EXPECT_EQ(h.count("x-custom"), 2u);
  EXPECT_EQ(h.count(HeaderId::kContentLength), 1u);
  EXPECT_EQ(h.get(HeaderId::kOther), nullptr);  // kOther is no name
  h.set("x-custom", "3");
  h.set("content-length", "6");
  h.set("X-Forwarded-Proto", "http");  // absent: appended, interned
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h.fields()[1].name, "X-Custom");
  EXPECT_EQ(h.fields()[1].value, "3");
  EXPECT_EQ(h.fields()[2].value, "6");
  EXPECT_EQ(h.fields()[3].id, HeaderId::kXForwardedProto);
  EXPECT_EQ(h.remove(HeaderId::kHost), 1u);
  EXPECT_EQ(h.remove("X-CUSTOM"), 1u);
  EXPECT_FALSE(h.has("host"));
  EXPECT_TRUE(h.has(HeaderId::kXForwardedProto));
  h.set(HeaderId::kXForwardedProto, "https");  // by id: replaces
  h.set(HeaderId::kXForwardedFor, "1.2.3.4");  // by id, absent: appended with the usual spelling
  EXPECT_EQ(h.count("x-forwarded-proto"), 1u);
  EXPECT_EQ(*h.get("X-Forwarded-Proto"), "https");
  EXPECT_EQ(h.fields().back().name, "X-Forwarded-For");
  EXPECT_EQ(h.fields().back().id, HeaderId::kXForwardedFor);
  h.add("Via", "1.1 a, 1.1 b");
  EXPECT_TRUE(h.hasToken("VIA", "1.1 B"));
}

TEST(HeaderMapTest, ConnectionNamesInternedOrNotAreStrippedButNeverProtectedOnes) {
  HeaderMap h;
  h.add("Connection", "cache-control, X-Other");
  h.add("connection", "COOKIE, x-forwarded-for, Proxy-Authorization, content-length, via");
  h.add("Cache-Control", "no-cache");
  h.add("x-other", "o");
  h.add("X-Others", "kept");  // a longer name is another name
  h.add("Cookie", "c");
  h.add("X-Forwarded-For", "1.2.3.4");
  h.add("Proxy-Authorization", "p");
  h.add("Content-Length", "1");
  h.add("VIA", "1.1 x");
  h.add("Transfer-Encoding", "chunked");
  h.add("Trailer", "x");
  stripHopByHop(h);
  std::string names;
  for (const auto& f : h.fields()) names.append(f.name).append(",");
  EXPECT_EQ(names, "X-Others,Cookie,X-Forwarded-For,Proxy-Authorization,Content-Length,");
  EXPECT_TRUE(isHopByHop("KEEP-ALIVE"));
  EXPECT_TRUE(isHopByHop(HeaderId::kTe));
  EXPECT_FALSE(isHopByHop("Host"));
  EXPECT_FALSE(isHopByHop("X-Keep-Alive"));
}

// Names and values live in the map's arena: growing it past its first size re-points every
// field, copies are independent, moves and swaps keep the views valid.
TEST(HeaderMapTest, FieldsStayIntactWhenTheArenaGrowsAndAcrossCopiesMovesAndSwaps) {
  HeaderMap h;
  h.reserve();
  std::vector<std::string> values;
  for (size_t i = 0; i < 64; ++i) {  // 64 × ~110 bytes: several times kReservedBytes
    values.push_back(std::string(100, static_cast<char>('a' + i % 26)) + std::to_string(i));
    h.add("X-F" + std::to_string(i), values.back());
  }
  h.set(HeaderId::kXForwardedFor, "1.2.3.4");
  ASSERT_EQ(h.size(), 65u);
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(h.fields()[i].name, "X-F" + std::to_string(i));
    EXPECT_EQ(*h.get("x-f" + std::to_string(i)), values[i]);
  }
  HeaderMap copy(h);
  h.set("X-F0", "changed");              // in place: shorter
  h.set("X-F1", std::string(300, 'z'));  // longer: appended to the arena
  EXPECT_EQ(*copy.get("X-F0"), values[0]);
  EXPECT_EQ(*copy.get("X-F1"), values[1]);
  EXPECT_EQ(*copy.get(HeaderId::kXForwardedFor), "1.2.3.4");
  EXPECT_EQ(copy.fields().back().name, "X-Forwarded-For");
  EXPECT_EQ(*h.get("X-F0"), "changed");
  EXPECT_EQ(*h.get("X-F1"), std::string(300, 'z'));
  h.set("X-F2", *h.get("x-f3"));  // a value of the map itself, in place
  EXPECT_EQ(*h.get("X-F2"), values[3]);
  HeaderMap moved(std::move(h));
  EXPECT_EQ(*moved.get("X-F63"), values[63]);
  HeaderMap other;
  other.add("Host", "h");
  other.swap(moved);
  EXPECT_EQ(*other.get("X-F62"), values[62]);
  EXPECT_EQ(*moved.get(HeaderId::kHost), "h");
  EXPECT_EQ(moved.size(), 1u);
  copy = other;
  EXPECT_EQ(copy.size(), 65u);
  EXPECT_EQ(*copy.get("X-F0"), "changed");
  other.clear();
  EXPECT_EQ(other.size(), 0u);
  HeaderMap empty;  // no storage yet: even an empty piece gets an arena to copy into
  empty.appendBytes("", 0);
  EXPECT_EQ(empty.bytesUsed(), 0u);
  EXPECT_FALSE(other.has(HeaderId::kXForwardedFor));
  EXPECT_EQ(*copy.get(HeaderId::kXForwardedFor), "1.2.3.4");
}

// Lookups by id skip a map without the name; the bookkeeping follows add, set, remove and
// hop-by-hop stripping.
TEST(HeaderMapTest, PresenceOfInternedNamesFollowsEveryChange) {
  HeaderMap h;
  EXPECT_FALSE(h.has(HeaderId::kConnection));
  h.add("connection", "close");
  h.add("Keep-Alive", "timeout=5");
  h.add("Host", "a");
  EXPECT_TRUE(h.has(HeaderId::kConnection));
  EXPECT_TRUE(h.hasToken("Connection", "close"));
  stripHopByHop(h);
  EXPECT_FALSE(h.has(HeaderId::kConnection));
  EXPECT_FALSE(h.has("keep-alive"));
  EXPECT_EQ(h.count(HeaderId::kKeepAlive), 0u);
  EXPECT_TRUE(h.has(HeaderId::kHost));
  h.set("HOST", "b");
  EXPECT_EQ(*h.get(HeaderId::kHost), "b");
  EXPECT_EQ(h.remove("host"), 1u);
  EXPECT_FALSE(h.has(HeaderId::kHost));
  EXPECT_EQ(h.remove(HeaderId::kHost), 0u);
  h.add("X-Plain", "v");
  stripHopByHop(h);  // nothing hop-by-hop: unchanged
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(*h.get("x-plain"), "v");
}

// The options Connection fields list are noted as the fields come in (stripping and the
// codec's persistence rule read them) and follow set and remove.
TEST(HeaderMapTest, ConnectionOptionsFollowTheConnectionFields) {
  HeaderMap h;
  h.add("Connection", "Keep-Alive, CLOSE");
  h.add("connection", "upgrade, x-mine");
  const uint64_t options = h.connectionOptions();
  EXPECT_NE(options & HeaderMap::idBit(HeaderId::kClose), 0u);
  EXPECT_NE(options & HeaderMap::idBit(HeaderId::kKeepAlive), 0u);
  EXPECT_NE(options & HeaderMap::idBit(HeaderId::kUpgrade), 0u);
  h.set("Connection", "te");  // one field left, listing te only
  EXPECT_EQ(h.connectionOptions(), HeaderMap::idBit(HeaderId::kTe));
  h.remove(HeaderId::kConnection);
  EXPECT_EQ(h.connectionOptions(), 0u);
  h.add("Close", "c");  // a field named like the option (a reserved name) goes when listed
  h.add("X-Mine", "m");
  h.add("Host", "a");
  h.add("Connection", "close, x-mine, host");
  stripHopByHop(h);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h.fields()[0].name, "Host");
  EXPECT_EQ(h.connectionOptions(), 0u);
  HeaderMap copy;
  copy.add("Connection", "close");
  HeaderMap copied(copy);
  EXPECT_NE(copied.connectionOptions() & HeaderMap::idBit(HeaderId::kClose), 0u);
}

// The reference rule: VCHAR, obs-text, SP and HTAB; no leading or trailing SP/HTAB.
bool referenceFieldValue(const std::string& s) {
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return s.empty() ||
         (s.front() != ' ' && s.front() != '\t' && s.back() != ' ' && s.back() != '\t');
}

TEST(HeaderMapTest, FieldValueCheckMatchesTheRuleForEveryByteAtEveryPosition) {
  for (int b = 0; b < 256; ++b) {
    for (size_t len : {1u, 3u, 8u, 9u, 15u, 16u, 17u, 24u, 31u, 32u, 33u, 36u, 47u}) {
      for (size_t pos = 0; pos < len; ++pos) {
        std::string s(len, 'a');
        s[pos] = static_cast<char>(b);
        ASSERT_EQ(isFieldValue(s), referenceFieldValue(s))
            << "byte " << b << " at " << pos << " of " << len;
      }
    }
  }
  EXPECT_TRUE(isFieldValue(""));
  EXPECT_TRUE(isFieldValue("\x80\xff obs-text \x7e"));
  EXPECT_FALSE(isFieldValue(std::string(40, 'a') + "\x7f" + std::string(3, 'b')));
  // HTAB next to a refused byte in the same 16-byte block, and tabs alone.
  EXPECT_FALSE(isFieldValue("abc\tdefgh\x01ijklmnopq"));
  EXPECT_TRUE(isFieldValue("a\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\tb"));
}

TEST(HeaderMapTest, TokenCheckMatchesTheRuleForEveryByteAtEveryPosition) {
  const std::string tchar_punct = "!#$%&'*+-.^_`|~";
  auto reference = [&](const std::string& t) {
    if (t.empty()) return false;
    for (unsigned char c : t) {
      bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                tchar_punct.find(static_cast<char>(c)) != std::string::npos;
      if (!ok) return false;
    }
    return true;
  };
  for (int b = 0; b < 256; ++b) {
    for (size_t len : {1u, 7u, 8u, 9u, 16u, 19u}) {
      for (size_t pos = 0; pos < len; ++pos) {
        std::string t(len, 'A');
        t[pos] = static_cast<char>(b);
        ASSERT_EQ(isToken(t), reference(t)) << "byte " << b << " at " << pos << " of " << len;
      }
    }
  }
}

}  // namespace
}  // namespace sluice::http
