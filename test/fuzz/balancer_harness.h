// Drives a balancer with a byte-driven mix of host-set changes and picks, checking every pick
// against the contract in core/api/sdk/balancer.h and the balancers' own headers.
//
// Input: a sequence of operations, each starting with one byte (op % 4):
//   0, 1  a new host set: 1 byte size (% 51), then per host 2 bytes: address (% 64, so addresses
//         repeat across sets and within one), healthy (bit 6), weight (the second byte: mostly
//         1..10, sometimes up to 10000 or 2^32-1)
//   2, 3  a pick: 1 byte tried count (% 5) then 1 byte per tried index (% set size)
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/api/sdk/balancer.h"

namespace sluice::fuzz {

void fuzzBalancer(sdk::Balancer& balancer, const uint8_t* data, size_t size);

}  // namespace sluice::fuzz
