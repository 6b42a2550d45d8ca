// MurmurHash64A (Austin Appleby, MurmurHash2 family, public domain), written out here: a fast,
// well-distributed 64-bit hash for the consistent-hash balancers (ring_hash, maglev). Bytes are
// read little-endian explicitly, so every platform (and every worker) computes the same value.
// Not a cryptographic hash: clients choosing keys can aim at a host, as with any such balancer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice::balancers {

inline uint64_t murmurHash64A(std::string_view key, uint64_t seed) {
  constexpr uint64_t kM = 0xc6a4a7935bd1e995ULL;
  constexpr int kR = 47;
  const auto* data = reinterpret_cast<const unsigned char*>(key.data());
  const size_t len = key.size();
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * kM);
  size_t blocks = len / 8;
  for (size_t b = 0; b < blocks; ++b, data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = (k << 8) | data[i];
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    h ^= k;
    h *= kM;
  }
  size_t tail = len & 7;
  if (tail != 0) {
    for (size_t i = tail; i > 0; --i) h ^= static_cast<uint64_t>(data[i - 1]) << (8 * (i - 1));
    h *= kM;
  }
  h ^= h >> kR;
  h *= kM;
  h ^= h >> kR;
  return h;
}

}  // namespace sluice::balancers
