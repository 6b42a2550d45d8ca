// rate_limit — the shared bucket table: one GCRA cell per key, for every worker of the process.
//
// Algorithm: GCRA (the Generic Cell Rate Algorithm of ITU-T I.371 / ATM Forum TM 4.0, the
// "virtual scheduling" form), which is a token bucket expressed as one number per key: the
// theoretical arrival time (TAT) of the next request. With emission interval T = 1 s / rate and
// burst B, a request at time `now` is admitted when
//     max(TAT, now) + T - now <= B * T
// and then TAT becomes max(TAT, now) + T. This is exactly a token bucket of capacity B refilled
// at `rate` (tokens = (now + B*T - TAT) / T), but it needs no separate "last refill" time, so
// one 64-bit word holds the whole state and one compare-and-swap admits a request: exact, with
// no rounding of a fractional token count (T is an integer number of nanoseconds, so the only
// error is rounding 1 s / rate to a whole nanosecond: 1e-9 relative at 1 req/s, 1e-6 at 1e6/s).
// A denied request changes nothing (no write), so a flood of denials does not contend.
//
// Why not a packed (tokens, last-refill) word: it needs fixed-point tokens and a split of the
// 64 bits between the two fields (precision or range lost on both), and every request writes.
//
// Table: a fixed array of groups of 16 slots, allocated once (memory is bounded by construction:
// bytes() never changes). A key hashes (SipHash-2-4 with a random per-table key, so clients
// cannot aim collisions) to a 64-bit fingerprint and to one group. Lookup of an existing key is
// lock-free: 16 relaxed-acquire loads of the group's fingerprints and one CAS on the cell.
// Inserting a new key takes a striped mutex (one of 256) and picks, within the group, an empty
// slot, else a cell whose bucket has refilled completely (TAT <= now: a full bucket is the same
// as no entry, so evicting it loses nothing), else the cell with the smallest TAT (the one
// closest to full: evicting it hands its key the fewest unearned tokens). Only the last kind is
// a real loss (counted in evictionsActive()).
//
// Exactness limits (documented in docs/configuration.md): two keys with the same 64-bit
// fingerprint share a bucket (probability ~ n^2 / 2^65: 3e-8 for a million keys); a request that
// races with the eviction of its own key may be charged to the key that replaced it.
//
// Threads: every method may be called from any thread at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "filters/common/siphash.h"

namespace sluice::filters::rate_limit {

// SipHash-2-4 (filters/common/siphash.h).
using filters::sipHash24;

// What one request got.
struct Decision {
  bool admitted = false;
  uint64_t remaining = 0;       // whole tokens left after this request (0 when denied)
  uint64_t retry_after_ns = 0;  // denied: time until this request would be admitted
  uint64_t reset_ns = 0;        // time until the bucket is full again
};

class GcraTable {
 public:
  // `interval_ns` = 1 s / rate (>= 1), `burst` >= 1, burst * interval_ns < 2^62; the table holds
  // at least `max_keys` keys (2x to 4x as many slots: 16 bytes each).
  GcraTable(uint64_t interval_ns, uint64_t burst, size_t max_keys);
  GcraTable(const GcraTable&) = delete;
  GcraTable& operator=(const GcraTable&) = delete;

  // Spends one token of `key`'s bucket at time `now_ns` (a value of nowNs(), or any monotonic
  // nanosecond clock >= kClockBase in tests).
  Decision admit(std::string_view key, uint64_t now_ns) {
    return admitFingerprint(fingerprint(key), now_ns);
  }
  // admit() in two steps, for a caller that keeps the fingerprint of a key it sees again (a
  // key's fingerprint is fixed for the table's life: a keyed SipHash, never 0).
  uint64_t fingerprint(std::string_view key) const;
  Decision admitFingerprint(uint64_t fp, uint64_t now_ns);

  // The clock admit() expects: CLOCK_MONOTONIC in ns, offset by kClockBase.
  static uint64_t nowNs();
  // Every real time is at least this; values below it mark fresh (full) cells.
  static constexpr uint64_t kClockBase = uint64_t{1} << 40;

  uint64_t intervalNs() const { return interval_ns_; }
  uint64_t burst() const { return burst_; }
  size_t capacity() const { return group_count_ * kGroupSize; }  // slots
  size_t bytes() const { return group_count_ * sizeof(Group); }  // fixed at construction
  size_t size() const { return occupied_.load(std::memory_order_relaxed); }  // keys held
  uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }
  // Evictions of a bucket that had not refilled yet (its key got tokens back).
  uint64_t evictionsActive() const { return evictions_active_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kGroupSize = 16;
  static constexpr size_t kStripes = 256;
  static constexpr uint64_t kBusy = ~uint64_t{0};  // a cell being handed to another key
  struct alignas(64) Group {
    std::atomic<uint64_t> keys[kGroupSize];  // fingerprint, 0 = empty
    std::atomic<uint64_t> tats[kGroupSize];  // TAT in ns (< kClockBase: fresh, i.e. full)
  };
  enum class Step { kDone, kRetry };

  int find(const Group& g, uint64_t fp) const;
  int insert(Group& g, size_t group_index, uint64_t fp, uint64_t now_ns);
  Step spend(Group& g, int slot, uint64_t fp, uint64_t now_ns, Decision* out);

  const uint64_t interval_ns_;
  const uint64_t burst_;
  const uint64_t tolerance_ns_;  // burst * interval
  size_t group_count_ = 1;       // a power of two
  std::unique_ptr<Group[]> groups_;
  uint64_t seed0_ = 0, seed1_ = 0;
  std::mutex stripes_[kStripes];
  std::atomic<uint64_t> fresh_{1};  // next marker for a cell handed to a new key
  std::atomic<size_t> occupied_{0};
  std::atomic<uint64_t> evictions_{0};
  std::atomic<uint64_t> evictions_active_{0};
};

}  // namespace sluice::filters::rate_limit
