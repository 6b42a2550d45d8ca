#include "filters/common/siphash.h"

#include <cstring>

namespace sluice::filters {
namespace {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void compress(uint64_t m) {  // 2 rounds per message word
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

uint64_t loadLe64(const unsigned char* p) {
  // One unaligned load (the byte-by-byte loop was not merged into one by the compiler).
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

uint64_t sipHash24(uint64_t k0, uint64_t k1, std::string_view data) {
  SipState s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
             k1 ^ 0x7465646279746573ull};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t n = data.size();
  const size_t whole = n & ~size_t{7};
  for (size_t i = 0; i < whole; i += 8) s.compress(loadLe64(p + i));
  // The last word: the remaining 0..7 bytes, the length's low byte on top.
  uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
  for (size_t i = 0; i < (n & 7); ++i) last |= static_cast<uint64_t>(p[whole + i]) << (8 * i);
  s.compress(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();  // 4 finalisation rounds
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace sluice::filters
