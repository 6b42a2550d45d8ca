// Filter ABI 1.4 (core/api/filter.h): header_name interns and checks a name once; the *_named
// calls refuse a NULL handle without touching the stream; HeaderMap's *Resolved calls (what the
// host runs for them) give the by-name calls' results.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "core/http/headers.h"
#include "core/proxy/stream.h"

namespace sluice::proxy {
namespace {

sluice_str str(const char* s) { return {s, std::char_traits<char>::length(s)}; }

const sluice_filter_host_api* api() { return filterHostApi(); }

TEST(HeaderNamesTest, TheHostTableCoversAbi14) {
  ASSERT_GE(api()->struct_size,
            offsetof(sluice_filter_host_api, header_remove_named) + sizeof(void*));
  EXPECT_NE(api()->header_name, nullptr);
  EXPECT_NE(api()->header_get_named, nullptr);
  EXPECT_NE(api()->header_set_named, nullptr);
  EXPECT_NE(api()->header_add_named, nullptr);
  EXPECT_NE(api()->header_remove_named, nullptr);
}

TEST(HeaderNamesTest, SameBytesSameHandleOtherSpellingOtherHandle) {
  const sluice_header_name* a = api()->header_name(str("X-Api-Key"));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(api()->header_name(str("X-Api-Key")), a);
  std::string copy = "X-Api-Key";  // other memory, same bytes
  EXPECT_EQ(api()->header_name({copy.data(), copy.size()}), a);
  const sluice_header_name* lower = api()->header_name(str("x-api-key"));
  ASSERT_NE(lower, nullptr);
  EXPECT_NE(lower, a);
  // Known names too (the host's interned ids), in any letter case.
  EXPECT_NE(api()->header_name(str("x-request-id")), nullptr);
  EXPECT_NE(api()->header_name(str("Cache-Control")), nullptr);
}

TEST(HeaderNamesTest, InvalidNamesGetNoHandle) {
  EXPECT_EQ(api()->header_name(sluice_str{nullptr, 0}), nullptr);
  EXPECT_EQ(api()->header_name(str("")), nullptr);
  EXPECT_EQ(api()->header_name(str("Bad Name")), nullptr);
  EXPECT_EQ(api()->header_name(str("X-A:b")), nullptr);
  EXPECT_EQ(api()->header_name(str("X-\xc3\xa9")), nullptr);
  std::string longest(256, 'a');
  EXPECT_NE(api()->header_name({longest.data(), longest.size()}), nullptr);
  std::string too_long(257, 'a');
  EXPECT_EQ(api()->header_name({too_long.data(), too_long.size()}), nullptr);
}

TEST(HeaderNamesTest, NullHandlesAreRefusedWithoutTouchingTheStream) {
  // The stream is never looked at for a NULL handle (a null stream would crash otherwise).
  sluice_stream* none = nullptr;
  sluice_str v = api()->header_get_named(none, SLUICE_HEADERS_REQUEST, nullptr, 0);
  EXPECT_EQ(v.data, nullptr);
  EXPECT_EQ(v.len, 0u);
  EXPECT_EQ(api()->header_set_named(none, SLUICE_HEADERS_REQUEST, nullptr, str("v")), -1);
  EXPECT_EQ(api()->header_add_named(none, SLUICE_HEADERS_RESPONSE, nullptr, str("v")), -1);
  EXPECT_EQ(api()->header_remove_named(none, SLUICE_HEADERS_REQUEST, nullptr), 0u);
}

// The by-resolved-name calls (a name the caller resolved: id and a spelling that outlives the
// map) against the by-name ones.
TEST(HeaderNamesTest, ResolvedCallsMatchTheByNameCalls) {
  static const std::string kKey = "x-api-key";  // outlives every map here
  const http::HeaderId other = http::headerId(kKey);
  ASSERT_EQ(other, http::HeaderId::kOther);
  http::HeaderMap m;
  m.add("Host", "a");
  m.add("X-Api-Key", "k1");
  m.add("x-API-key", "k2");
  m.add("Cache-Control", "no-cache");
  ASSERT_NE(m.getResolved(other, kKey, 0), nullptr);
  EXPECT_EQ(*m.getResolved(other, kKey, 0), "k1");
  EXPECT_EQ(*m.getResolved(other, kKey, 1), "k2");
  EXPECT_EQ(m.getResolved(other, kKey, 2), nullptr);
  const http::HeaderId cc = http::headerId("cache-control");
  ASSERT_NE(cc, http::HeaderId::kOther);
  EXPECT_EQ(*m.getResolved(cc, "cache-control", 0), "no-cache");

  // set: the first field keeps its place and takes the value, the later copies go.
  m.setResolved(other, kKey, "new");
  ASSERT_EQ(m.count("X-Api-Key"), 1u);
  EXPECT_EQ(*m.get("x-api-key"), "new");
  EXPECT_EQ(m.fields()[1].value, "new");
  EXPECT_EQ(m.fields()[1].name, "X-Api-Key");  // the field's own spelling stays

  // add: appended with the resolved spelling, viewed (not copied).
  m.addResolved(other, kKey, "again");
  EXPECT_EQ(m.count("X-API-KEY"), 2u);
  EXPECT_EQ(m.fields().back().name.data(), kKey.data());

  // A copy of the map owns its bytes; the spelling is still read right.
  http::HeaderMap copy(m);
  EXPECT_EQ(copy.fields().back().name, "x-api-key");
  EXPECT_EQ(copy.fields().back().value, "again");

  EXPECT_EQ(m.removeResolved(other, kKey), 2u);
  EXPECT_EQ(m.count("x-api-key"), 0u);
  EXPECT_EQ(m.removeResolved(other, kKey), 0u);
  EXPECT_EQ(m.removeResolved(cc, "Cache-Control"), 1u);
  EXPECT_FALSE(m.has(cc));
  EXPECT_EQ(m.size(), 1u);  // Host

  // set of an absent name appends.
  m.setResolved(cc, "Cache-Control", "max-age=1");
  EXPECT_EQ(*m.get(cc), "max-age=1");
}

}  // namespace
}  // namespace sluice::proxy
