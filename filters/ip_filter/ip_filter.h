// ip_filter — admits or refuses a request by its client IP address against allow and deny lists
// of CIDR prefixes (IPv4 and IPv6).
//
// Decision, in this order:
//   1. the client address is in `deny`               → 403
//   2. `allow` is non-empty and the address is not in it → 403
//   3. otherwise the request goes on.
// So deny wins over allow, and an empty `allow` means "everyone not denied".
//
// The client address: by default the downstream peer (Stream::clientAddress()). Behind trusted
// proxies (load balancers that append the address they saw to X-Forwarded-For, the common
// practice that RFC 7239 §5.2 standardises for Forwarded), `trusted_xff_depth: N` says how many
// such proxies stand in front of sluice. Entries are counted from the right: the rightmost ones
// were appended by proxies we trust, anything further left came from the client and may be forged.
// sluice itself appends the peer's address to X-Forwarded-For before filters run, so the header a
// filter sees ends with the peer; with depth N the client is the (N+1)-th entry from the right of
// that header, i.e. the N-th from the right of the header as it arrived (N = 1: the address your
// load balancer saw). Several X-Forwarded-For fields are read as one list, in order.
//
// An X-Forwarded-For that cannot be trusted — fewer than N+1 entries, an entry among the last N+1
// that is not an address ("ip", "ip:port", "[v6]" or "[v6]:port"; "unknown" and obfuscated
// identifiers are not), or a rightmost entry that is not the peer — is `on_invalid_xff`: `deny`
// (default, the safe choice: a request that did not come through the configured proxy chain is
// refused, so a deny list cannot be bypassed by breaking the header) or `peer` (use the peer
// address instead).
//
// YAML:
//   filters:
//     - name: ip_filter
//       config:
//         allow: [10.0.0.0/8, "2001:db8::/32"]   # CIDRs or bare addresses; empty = all
//         deny: [10.6.6.0/24]                     # checked first
//         trusted_xff_depth: 0                    # 0..16 proxies in front of sluice
//         on_invalid_xff: deny                    # deny | peer
//
// Refusal: 403 with `{"status":403,"error":"Forbidden"}` (application/json). CIDRs are parsed at
// config load (host bits set, bad lengths and non-addresses are refused with the line); lookups
// cost one hash probe per distinct prefix length in a list, whatever the list's size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "filters/ip_filter/cidr.h"

namespace sluice::filters {

// Immutable after construction (main thread); read by every worker.
struct IpFilterConfig {
  explicit IpFilterConfig(const sdk::ConfigNode& node);

  enum class OnInvalidXff { kDeny, kPeer };

  ip::CidrSet allow;
  ip::CidrSet deny;
  uint32_t trusted_xff_depth = 0;
  OnInvalidXff on_invalid_xff = OnInvalidXff::kDeny;

  // The client address of a request per the rules above; nullopt when it cannot be determined
  // (then the request is refused).
  std::optional<ip::Address> clientAddress(const sdk::Stream& stream) const;
  // True when `a` passes the deny and allow lists.
  bool admits(const ip::Address& a) const;
};

// The client's entry in an X-Forwarded-For list that ends with `peer` (sluice's own entry):
// the (depth+1)-th from the right. nullopt when the list is too short, the rightmost entry is not
// `peer`, or one of the entries examined is not an address. `fields` are the header's values.
std::optional<ip::Address> clientFromForwardedFor(const std::vector<std::string_view>& fields,
                                                  const ip::Address& peer, uint32_t depth);

class IpFilter : public sdk::Filter {
 public:
  explicit IpFilter(const IpFilterConfig& config) : config_(config) {}
  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;

 private:
  const IpFilterConfig& config_;
};

}  // namespace sluice::filters
