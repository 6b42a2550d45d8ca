// Test helper for consistent-hash balancers (ring_hash, maglev): map many keys through a
// balancer and compare mappings. Single-threaded.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/api/sdk/balancer.h"
#include "test/balancers/testing/fake_host.h"

namespace sluice::testing {

// The i-th test key ("key-<i>"); keys are distinct.
std::string testKey(size_t i);
// `count` hosts "10.0.0.<i>:80" (i from `first`), all of weight `weight`, healthy.
std::vector<FakeHost> numberedHosts(size_t count, uint32_t weight = 1, size_t first = 1);
// Hosts "10.0.0.1:80", "10.0.0.2:80", ... with the given weights, all healthy.
std::vector<FakeHost> weightedHosts(const std::vector<uint32_t>& weights);

// The address that `balancer` picks for each of testKey(0 .. count-1) over `set` (the set the
// balancer last saw), "NONE" when it picks none.
std::vector<std::string> mapKeys(sdk::Balancer& balancer, const FakeHostSet& set, size_t count,
                                 const std::vector<uint32_t>& tried = {});
// Fraction of positions where the two mappings differ (same length).
double movedFraction(const std::vector<std::string>& before, const std::vector<std::string>& after);
// Each address's share of the mapping (0..1).
std::map<std::string, double> shares(const std::vector<std::string>& mapping);
// The largest |share / expected - 1| over `expected` (address → expected share).
double worstRelativeError(const std::map<std::string, double>& actual,
                          const std::map<std::string, double>& expected);
// Expected shares for `hosts`: weight / total weight of the healthy ones.
std::map<std::string, double> weightShares(const std::vector<FakeHost>& hosts);

}  // namespace sluice::testing
