// Deterministic byte mutations for the corpus test driver: a small cousin of libFuzzer's
// mutators, seeded, so the ordinary test explores the same inputs on every run.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sluice::fuzz {

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}
  // 1-4 mutations of `base`; `pool` gives material to splice in. At most 8 KiB.
  std::string mutate(const std::string& base, const std::vector<std::string>& pool);

 private:
  size_t below(size_t n) { return n == 0 ? 0 : rng_() % n; }
  void mutateOnce(std::string& s, const std::vector<std::string>& pool);

  std::mt19937_64 rng_;
};

}  // namespace sluice::fuzz
