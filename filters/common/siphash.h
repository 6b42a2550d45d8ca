// SipHash-2-4, shared by the filters that key tables with it (api_key_auth through auth_common,
// rate_limit's GCRA table). Linked statically into each plugin.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace sluice::filters {

// SipHash-2-4 (Aumasson, Bernstein 2012: https://www.aumasson.jp/siphash/siphash.pdf) of `data`
// under the 128-bit secret key (k0, k1): a keyed hash for tables whose keys are secrets or
// attacker-chosen; without the key, nobody can tell or steer which entry an input lands on.
// Pure function, any thread.
uint64_t sipHash24(uint64_t k0, uint64_t k1, std::string_view data);

// The 8 bytes at `p` as a little-endian 64-bit word (one unaligned load).
inline uint64_t loadLe64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

}  // namespace sluice::filters
