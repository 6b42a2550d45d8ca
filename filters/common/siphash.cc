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

uint32_t loadLe32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

// The last n % 8 bytes of the n at p as the low bytes of a little-endian word, the others zero,
// without a loop: one load of the 8 bytes that end there, shifted, when n >= 8; else two
// overlapping 4-byte loads, or three single bytes (the same byte may be read twice; it lands on
// the same bits).
inline uint64_t tailLe(const unsigned char* p, size_t n) {
  const size_t r = n & 7;
  if (r == 0) return 0;
  if (n >= 8) return loadLe64(p + n - 8) >> (8 * (8 - r));
  if (r >= 4) {
    return static_cast<uint64_t>(loadLe32(p)) | static_cast<uint64_t>(loadLe32(p + r - 4))
                                                    << (8 * (r - 4));
  }
  return static_cast<uint64_t>(p[0]) | static_cast<uint64_t>(p[r / 2]) << (8 * (r / 2)) |
         static_cast<uint64_t>(p[r - 1]) << (8 * (r - 1));
}

}  // namespace

uint64_t sipHash24(uint64_t k0, uint64_t k1, std::string_view data) {
  SipState s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
             k1 ^ 0x7465646279746573ull};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t n = data.size();
  const size_t whole = n & ~size_t{7};
  for (size_t i = 0; i < whole; i += 8) s.compress(loadLe64(p + i));
  // The last word: the remaining 0..7 bytes, the length's low byte on top.
  s.compress(tailLe(p, n) | static_cast<uint64_t>(n & 0xff) << 56);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();  // 4 finalisation rounds
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace sluice::filters
