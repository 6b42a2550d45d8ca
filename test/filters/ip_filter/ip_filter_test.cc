// ip_filter unit tests: CIDR parsing and matching, the X-Forwarded-For depth rule, and the
// plugin driven through its C hook table over a fake stream.
#include "filters/ip_filter/ip_filter.h"

#include <gtest/gtest.h>

#include <string>

#include "test/filters/testing/filter_harness.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::filters {
namespace {

using testing::FakeStream;
using testing::FilterHarness;

ip::Address addr(const char* text) {
  std::optional<ip::Address> a = ip::parseHostPort(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(ip::Address{});
}

ip::CidrSet setOf(std::initializer_list<const char*> cidrs) {
  ip::CidrSet s;
  for (const char* c : cidrs) {
    std::string why;
    std::optional<ip::Cidr> cidr = ip::parseCidr(c, &why);
    EXPECT_TRUE(cidr.has_value()) << c << ": " << why;
    if (cidr) s.add(*cidr);
  }
  return s;
}

TEST(CidrTest, ParsesAddressesInEveryForm) {
  EXPECT_EQ(ip::formatAddress(addr("192.0.2.1")), "192.0.2.1");
  EXPECT_EQ(ip::formatAddress(addr("192.0.2.1:8080")), "192.0.2.1");
  EXPECT_EQ(ip::formatAddress(addr("[2001:db8::1]:443")), "2001:db8::1");
  EXPECT_EQ(ip::formatAddress(addr("[2001:db8::1]")), "2001:db8::1");
  EXPECT_EQ(ip::formatAddress(addr("2001:DB8:0:0::1")), "2001:db8::1");
  // IPv4-mapped IPv6 is the same address as the IPv4 one.
  EXPECT_EQ(addr("::ffff:192.0.2.1"), addr("192.0.2.1"));
  EXPECT_EQ(addr("[::ffff:c000:201]:1"), addr("192.0.2.1"));
  for (const char* bad :
       {"", "unknown", "192.0.2", "192.0.2.256", "01.2.3.4", "1.2.3.4:", "1.2.3.4:123456",
        "[1.2.3.4]", "[::1", "::1]:80", "fe80::1%eth0", "_hidden", " 1.2.3.4"}) {
    EXPECT_FALSE(ip::parseHostPort(bad).has_value()) << bad;
  }
}

TEST(CidrTest, RefusesBadPrefixes) {
  std::string why;
  EXPECT_FALSE(ip::parseCidr("10.0.0.0/33", &why));
  EXPECT_EQ(why, "'10.0.0.0/33': prefix length must be 0..32");
  EXPECT_FALSE(ip::parseCidr("::/129", &why));
  EXPECT_FALSE(ip::parseCidr("10.1.2.3/8", &why));
  EXPECT_EQ(why, "'10.1.2.3/8' has host bits set (did you mean 10.0.0.0/8?)");
  EXPECT_FALSE(ip::parseCidr("10.0.0.0/", &why));
  EXPECT_FALSE(ip::parseCidr("10.0.0.0/x", &why));
  EXPECT_FALSE(ip::parseCidr("example.com/8", &why));
  EXPECT_TRUE(ip::parseCidr("0.0.0.0/0", &why));
  EXPECT_TRUE(ip::parseCidr("::/0", &why));
}

TEST(CidrTest, MatchesByPrefix) {
  ip::CidrSet s = setOf({"10.0.0.0/8", "192.168.1.128/25", "2001:db8::/32", "203.0.113.7"});
  EXPECT_TRUE(s.contains(addr("10.255.0.1")));
  EXPECT_FALSE(s.contains(addr("11.0.0.1")));
  EXPECT_TRUE(s.contains(addr("192.168.1.200")));
  EXPECT_FALSE(s.contains(addr("192.168.1.127")));
  EXPECT_TRUE(s.contains(addr("2001:db8:ffff::1")));
  EXPECT_FALSE(s.contains(addr("2001:db9::1")));
  EXPECT_TRUE(s.contains(addr("203.0.113.7")));
  EXPECT_FALSE(s.contains(addr("203.0.113.8")));
  // An IPv4 prefix matches the IPv4-mapped form a dual-stack socket reports, and vice versa.
  EXPECT_TRUE(s.contains(addr("::ffff:10.1.2.3")));
  EXPECT_TRUE(setOf({"::ffff:10.0.0.0/104"}).contains(addr("10.9.9.9")));
  // IPv4 prefixes never match native IPv6 addresses.
  EXPECT_FALSE(setOf({"0.0.0.0/0"}).contains(addr("2001:db8::1")));
  EXPECT_TRUE(setOf({"::/0"}).contains(addr("10.0.0.1")));  // all of IPv6 includes the mapped
}

TEST(CidrTest, LargeListsMatchEveryEntry) {
  ip::CidrSet s;
  std::string why;
  for (int i = 0; i < 50000; ++i) {
    std::string c = std::to_string(10 + (i >> 16)) + "." + std::to_string((i >> 8) & 255) + "." +
                    std::to_string(i & 255) + ".0/24";
    s.add(*ip::parseCidr(c, &why));
  }
  s.add(*ip::parseCidr("2001:db8::/48", &why));
  EXPECT_EQ(s.size(), 50001u);
  EXPECT_TRUE(s.contains(addr("10.0.0.9")));
  EXPECT_TRUE(s.contains(addr("10.195.79.200")));  // i = 49999 = 0xc34f
  EXPECT_FALSE(s.contains(addr("10.195.80.1")));
  EXPECT_TRUE(s.contains(addr("2001:db8:0:1::")));
  EXPECT_FALSE(s.contains(addr("2001:db8:1::")));
}

TEST(ForwardedForTest, DepthCountsFromTheRightAfterSluicesOwnEntry) {
  ip::Address peer = addr("10.0.0.1");
  // Header as a filter sees it: client-sent entries, then the proxy chain, then sluice's entry.
  std::vector<std::string_view> h = {"6.6.6.6, 198.51.100.7", "10.0.0.2, 10.0.0.1"};
  EXPECT_EQ(clientFromForwardedFor(h, peer, 0), peer);
  EXPECT_EQ(clientFromForwardedFor(h, peer, 1), addr("10.0.0.2"));
  EXPECT_EQ(clientFromForwardedFor(h, peer, 2), addr("198.51.100.7"));
  EXPECT_EQ(clientFromForwardedFor(h, peer, 3), addr("6.6.6.6"));
  EXPECT_FALSE(clientFromForwardedFor(h, peer, 4));  // fewer entries than the depth says
  // The rightmost entry must be the peer (sluice appends it); otherwise nothing is trusted.
  EXPECT_FALSE(clientFromForwardedFor(h, addr("10.0.0.9"), 1));
  // A malformed entry among those examined invalidates; one further left does not matter.
  std::vector<std::string_view> junk = {"garbage, unknown, 198.51.100.7:5000 ,, 10.0.0.1"};
  EXPECT_EQ(clientFromForwardedFor(junk, peer, 1), addr("198.51.100.7"));
  EXPECT_FALSE(clientFromForwardedFor(junk, peer, 2));
  EXPECT_FALSE(clientFromForwardedFor({}, peer, 1));
  // IPv6 entries in every spelling; an IPv6 peer.
  ip::Address v6peer = addr("[2001:db8::10]:1");
  std::vector<std::string_view> v6 = {"[2001:db8::1]:443, 192.0.2.1:80, 2001:DB8::10"};
  EXPECT_EQ(clientFromForwardedFor(v6, v6peer, 1), addr("192.0.2.1"));
  EXPECT_EQ(clientFromForwardedFor(v6, v6peer, 2), addr("2001:db8::1"));
}

TEST(IpFilterTest, DenyWinsThenAllowList) {
  FilterHarness h(sluice_plugin_entry(),
                  "allow: [127.0.0.0/8, '::1']\ndeny: [127.0.0.66, '2001:db8::/32']\n");
  ASSERT_TRUE(h.configured()) << h.error();
  struct Case {
    const char* peer;
    bool admitted;
  };
  for (const Case& c :
       {Case{"127.0.0.1:4000", true}, Case{"127.0.0.66:4000", false}, Case{"[::1]:4000", true},
        Case{"[::ffff:127.0.0.5]:1", true}, Case{"[::ffff:127.0.0.66]:1", false},
        Case{"192.0.2.1:80", false}, Case{"[2001:db8::1]:80", false}}) {
    FakeStream s;
    s.client_address = c.peer;
    sluice_filter_status st = h.requestHeaders(s);
    if (c.admitted) {
      EXPECT_EQ(st, SLUICE_FILTER_CONTINUE) << c.peer;
      EXPECT_FALSE(s.local_reply.has_value()) << c.peer;
    } else {
      EXPECT_EQ(st, SLUICE_FILTER_STOP) << c.peer;
      ASSERT_TRUE(s.local_reply.has_value()) << c.peer;
      EXPECT_EQ(s.local_reply->status, 403u);
      EXPECT_EQ(s.local_reply->content_type, "application/json");
      EXPECT_EQ(s.local_reply->body, "{\"status\":403,\"error\":\"Forbidden\"}\n");
    }
  }
}

TEST(IpFilterTest, EmptyAllowAdmitsAllButDenied) {
  FilterHarness h(sluice_plugin_entry(), "deny: 192.0.2.0/24\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream ok, denied;
  ok.client_address = "198.51.100.1:1";
  denied.client_address = "192.0.2.200:1";
  EXPECT_EQ(h.requestHeaders(ok), SLUICE_FILTER_CONTINUE);
  EXPECT_EQ(h.requestHeaders(denied), SLUICE_FILTER_STOP);
  FilterHarness none(sluice_plugin_entry(), "");
  ASSERT_TRUE(none.configured()) << none.error();
  FakeStream any;
  EXPECT_EQ(none.requestHeaders(any), SLUICE_FILTER_CONTINUE);
}

TEST(IpFilterTest, TrustedXffDepthPicksTheClientTheProxySaw) {
  FilterHarness h(sluice_plugin_entry(), "deny: [203.0.113.0/24]\ntrusted_xff_depth: 1\n");
  ASSERT_TRUE(h.configured()) << h.error();
  // Load balancer 10.0.0.1 saw 203.0.113.9; the client forged 1.1.1.1 before it.
  FakeStream denied("GET", "/", {{"X-Forwarded-For", "1.1.1.1, 203.0.113.9, 10.0.0.1"}});
  denied.client_address = "10.0.0.1:5555";
  EXPECT_EQ(h.requestHeaders(denied), SLUICE_FILTER_STOP);
  // A forged entry left of the trusted one cannot get a denied client out of the list...
  FakeStream forged("GET", "/", {{"X-Forwarded-For", "203.0.113.9, 1.1.1.1, 10.0.0.1"}});
  forged.client_address = "10.0.0.1:5555";
  EXPECT_EQ(h.requestHeaders(forged), SLUICE_FILTER_CONTINUE);  // ...the LB saw 1.1.1.1
  // A header too short for the depth (request did not come through the proxy): refused.
  FakeStream direct("GET", "/", {{"X-Forwarded-For", "10.0.0.1"}});
  direct.client_address = "10.0.0.1:5555";
  EXPECT_EQ(h.requestHeaders(direct), SLUICE_FILTER_STOP);
  FakeStream malformed("GET", "/", {{"X-Forwarded-For", "nonsense, 10.0.0.1"}});
  malformed.client_address = "10.0.0.1:5555";
  EXPECT_EQ(h.requestHeaders(malformed), SLUICE_FILTER_STOP);
}

TEST(IpFilterTest, InvalidXffCanFallBackToThePeer) {
  FilterHarness h(sluice_plugin_entry(),
                  "allow: [10.0.0.0/8]\ntrusted_xff_depth: 2\non_invalid_xff: peer\n");
  ASSERT_TRUE(h.configured()) << h.error();
  FakeStream s("GET", "/", {{"X-Forwarded-For", "10.0.0.1"}});
  s.client_address = "10.0.0.1:5555";
  EXPECT_EQ(h.requestHeaders(s), SLUICE_FILTER_CONTINUE);  // the peer 10.0.0.1 is allowed
  FakeStream outside("GET", "/", {{"X-Forwarded-For", "192.0.2.1, 10.0.0.3, 10.0.0.1"}});
  outside.client_address = "10.0.0.1:5555";
  EXPECT_EQ(h.requestHeaders(outside), SLUICE_FILTER_STOP);  // valid header: client 192.0.2.1
}

TEST(IpFilterTest, RefusesBadConfigsWithLine) {
  struct Case {
    const char* yaml;
    const char* message;
    uint32_t line;
  };
  for (const Case& c : {
           Case{"allow: [10.0.0.0/8]\ndeny: [10.0.0.1/8]\n",
                "'10.0.0.1/8' has host bits set (did you mean 10.0.0.0/8?)", 2},
           Case{"allow:\n  - 10.0.0.0/8\n  - nowhere\n",
                "'nowhere' is not an IPv4 or IPv6 address or CIDR", 3},
           Case{"trusted_xff_depth: 17\n", "expected an integer from 0 to 16", 1},
           Case{"on_invalid_xff: allow\n", "expected deny or peer", 1},
           Case{"alow: []\n",
                "unknown key 'alow' (expected one of: allow, deny, trusted_xff_depth, "
                "on_invalid_xff)",
                1},
           Case{"deny: {a: b}\n", "expected a list of CIDRs", 1},
       }) {
    FilterHarness h(sluice_plugin_entry(), c.yaml);
    EXPECT_FALSE(h.configured()) << c.yaml;
    EXPECT_EQ(h.error(), c.message) << c.yaml;
    EXPECT_EQ(h.errorLine(), c.line) << c.yaml;
  }
}

}  // namespace
}  // namespace sluice::filters
