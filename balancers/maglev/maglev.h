// maglev — Maglev consistent hashing (Eisenbud et al., "Maglev: A Fast and Reliable Software
// Network Load Balancer", NSDI 2016) on the request's hash key (the cluster's `hash_key:`).
//
// Table: a lookup table of `table_size` slots (a prime, default 65537), each naming a host.
// Every host of the set — healthy or not, so health flaps never move other hosts' keys — has a
// permutation of the slots, offset + j × skip (mod table_size), with offset and skip from two
// seeded MurmurHash64A hashes of its address (murmur_hash.h). Hosts take turns claiming their
// next unclaimed preferred slot until the table is full. Weights follow Envoy's weighted Maglev:
// in turn t a host of weight w claims a slot only when t × w ≥ its running target, which grows
// by the largest weight per claim, so the heaviest host claims every turn and a host of half its
// weight every other turn; slot shares follow weights. Hosts take turns in address order, so the
// table does not depend on the order of the set. Building is O(table_size × log) per change of
// addresses or weights; lookups are one hash and one array read.
//
// Pick: slot = hash(key) mod table_size; its host if eligible. Otherwise the key is rehashed
// with seeds 1, 2, … up to 16 (a new slot each time, so a down or already-tried host's keys
// spread over the other hosts by weight, the same way on every worker); after that, a linear
// walk from the last slot finds the next eligible host. Eligible: healthy and not yet tried for
// this request; when every healthy host was tried, any healthy host. No healthy host →
// SLUICE_PICK_NONE. An empty key falls back to weighted random among the eligible hosts.
//
// Maglev trades a little disruption for perfect balance: when a host joins or leaves, keys of
// the staying hosts may move too (a few percent, see the tests). More hosts than slots: the
// table cannot hold them all and some hosts get no keys (logged); keep table_size ≥ 100 × hosts.
//
// YAML:
//   balancer:
//     name: maglev
//     config:
//       table_size: 65537          # a prime, 3 .. 5000011
#pragma once

#include <cstdint>
#include <vector>

#include "balancers/common/host_weights.h"
#include "core/api/sdk/balancer.h"
#include "core/api/sdk/config.h"

namespace sluice::balancers {

// Immutable after construction (main thread); read by every worker.
struct MaglevConfig {
  explicit MaglevConfig(const sdk::ConfigNode& node);

  uint64_t table_size = 65537;
};

// One per cluster per worker; worker thread only.
class Maglev : public sdk::Balancer {
 public:
  Maglev(const MaglevConfig& config, const sdk::BalancerContext& context)
      : config_(config), context_(context) {}

  // Called on the worker once after construction and on every change of hosts, weights or
  // health: rebuilds the table when addresses or weights changed (not on health changes alone).
  void onHostSet(const sdk::HostSet& hosts) override;
  // Called on the worker once per upstream attempt: one hash and one table read, usually.
  int64_t pick(const sdk::PickContext& ctx) override;

  // The host index in each slot (for tests).
  const std::vector<uint32_t>& table() const { return table_; }

 private:
  // Rebuilds the table from hosts_.layout().
  void buildTable();

  const MaglevConfig& config_;
  sdk::BalancerContext context_;
  HostWeights hosts_;            // weights, health and layout of the current set
  std::vector<uint32_t> table_;  // slot → host index
};

// True when n is prime (trial division; config time only).
bool isPrime(uint64_t n);

}  // namespace sluice::balancers
