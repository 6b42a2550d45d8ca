// ip_filter's address model: IP addresses and CIDR prefixes (RFC 4632, RFC 4291 §2.3) as 128-bit
// values, and a set of prefixes with a cheap membership test.
//
// IPv4 is held as an IPv4-mapped IPv6 address (::ffff:a.b.c.d, RFC 4291 §2.5.5.2), so the IPv4
// prefix 10.0.0.0/8 and the IPv6 prefix ::ffff:10.0.0.0/104 are the same prefix, and each
// matches both a plain IPv4 client and one that arrives as ::ffff:10.1.2.3 on a dual-stack socket.
// Header-only parsing helpers plus cidr.cc; no host calls; thread-safe when const.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sluice::filters::ip {

// An address as 16 bytes in network order: hi = bytes 0..7, lo = bytes 8..15.
struct Address {
  uint64_t hi = 0;
  uint64_t lo = 0;
  bool operator==(const Address& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const Address& o) const { return !(*this == o); }
};

// The first `bits` bits of `a` (0..128), the rest zero.
Address masked(const Address& a, uint32_t bits);

// "a.b.c.d" or an IPv6 text form (RFC 4291 §2.2, RFC 5952; no zone id). nullopt otherwise.
std::optional<Address> parseAddress(std::string_view text);
// An address as a peer or X-Forwarded-For element may spell it: "ip", "ip:port" (IPv4),
// "[v6]" or "[v6]:port". Surrounding spaces are not accepted here (trim first).
std::optional<Address> parseHostPort(std::string_view text);
// Text form for logs and messages: dotted quad for IPv4-mapped addresses, else RFC 5952.
std::string formatAddress(const Address& a);

// A prefix: an address and a length in bits counted on the 128-bit form (an IPv4 /n is
// 96 + n).
struct Cidr {
  Address network;  // already masked
  uint32_t bits = 0;
};

// "10.0.0.0/8", "2001:db8::/32", "::ffff:192.0.2.0/120", or a bare address (a /32 or /128).
// Host bits set below the prefix ("10.1.2.3/8") are refused: they are usually a typo, and a
// silent mask would widen or narrow the rule the operator meant. nullopt with `why` set on error.
std::optional<Cidr> parseCidr(std::string_view text, std::string* why);

// A set of prefixes. Lookup masks the address once per distinct prefix length present and
// probes a hash set, so it costs O(distinct lengths) (at most 129) whatever the list size.
class CidrSet {
 public:
  void add(const Cidr& cidr);
  bool contains(const Address& a) const;
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

 private:
  struct Hash {
    size_t operator()(const Address& a) const {
      return std::hash<uint64_t>()(a.hi * 0x9e3779b97f4a7c15ull ^ a.lo);
    }
  };
  std::vector<uint32_t> lengths_;                             // distinct, longest first
  std::vector<std::unordered_set<Address, Hash>> by_length_;  // [bits] -> networks
  size_t size_ = 0;
};

}  // namespace sluice::filters::ip
