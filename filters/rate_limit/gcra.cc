#include "filters/rate_limit/gcra.h"

#include <time.h>

#include <cstring>
#include <random>
#include <thread>

namespace sluice::filters::rate_limit {

GcraTable::GcraTable(uint64_t interval_ns, uint64_t burst, size_t max_keys)
    : interval_ns_(interval_ns < 1 ? 1 : interval_ns),
      burst_(burst < 1 ? 1 : burst),
      tolerance_ns_(burst_ * interval_ns_) {
  // At least 2 slots per key, rounded up to a power of two of groups: a group (16 slots) then
  // holds ~8 keys on average at max_keys, so one overflows (and evicts early) very rarely.
  size_t want = (2 * (max_keys < 1 ? 1 : max_keys) + kGroupSize - 1) / kGroupSize;
  while (group_count_ < want) group_count_ <<= 1;
  groups_ = std::make_unique<Group[]>(group_count_);  // value-initialized: zeros
  std::random_device device;
  seed0_ = (static_cast<uint64_t>(device()) << 32) ^ device();
  seed1_ = (static_cast<uint64_t>(device()) << 32) ^ device();
}

uint64_t GcraTable::nowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return kClockBase + static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t GcraTable::fingerprint(std::string_view key) const {
  uint64_t fp = sipHash24(seed0_, seed1_, key);
  return fp == 0 ? 1 : fp;  // 0 marks an empty slot
}

int GcraTable::find(const Group& g, uint64_t fp) const {
  for (size_t i = 0; i < kGroupSize; ++i) {
    if (g.keys[i].load(std::memory_order_acquire) == fp) return static_cast<int>(i);
  }
  return -1;
}

int GcraTable::insert(Group& g, size_t group_index, uint64_t fp, uint64_t now_ns) {
  std::lock_guard<std::mutex> lock(stripes_[group_index % kStripes]);
  int found = find(g, fp);  // another worker may have inserted it meanwhile
  if (found >= 0) return found;
  int victim = -1;
  uint64_t victim_tat = 0;
  for (size_t i = 0; i < kGroupSize; ++i) {
    if (g.keys[i].load(std::memory_order_relaxed) == 0) {
      // Never used, so its TAT is 0 (fresh): no reader can hold an expectation on it.
      g.keys[i].store(fp, std::memory_order_release);
      occupied_.fetch_add(1, std::memory_order_relaxed);
      return static_cast<int>(i);
    }
    uint64_t tat = g.tats[i].load(std::memory_order_acquire);
    if (victim < 0 || tat < victim_tat) {
      victim = static_cast<int>(i);
      victim_tat = tat;
    }
  }
  // The victim has the smallest TAT of the group: full (TAT <= now) when any cell is.
  evictions_.fetch_add(1, std::memory_order_relaxed);
  if (victim_tat > now_ns) evictions_active_.fetch_add(1, std::memory_order_relaxed);
  // Hand-over protocol (readers: see spend): park the cell, switch the key, then give it a
  // fresh marker unique to this hand-over (below kClockBase, so the bucket reads as full).
  // A reader that loaded the old TAT fails its CAS; one that loads the marker sees the new key.
  g.tats[victim].store(kBusy, std::memory_order_seq_cst);
  g.keys[victim].store(fp, std::memory_order_seq_cst);
  uint64_t marker = fresh_.fetch_add(1, std::memory_order_relaxed) % kClockBase;
  g.tats[victim].store(marker == 0 ? 1 : marker, std::memory_order_release);
  return victim;
}

GcraTable::Step GcraTable::spend(Group& g, int slot, uint64_t fp, uint64_t now_ns, Decision* out) {
  std::atomic<uint64_t>& cell = g.tats[slot];
  uint64_t tat = cell.load(std::memory_order_acquire);
  for (;;) {
    if (tat == kBusy) {  // being handed over (a few stores): look the key up again
      std::this_thread::yield();
      return Step::kRetry;
    }
    // Loaded after the TAT: when the TAT was a new owner's marker, this sees the new key.
    if (g.keys[slot].load(std::memory_order_acquire) != fp) return Step::kRetry;
    const uint64_t base = tat > now_ns ? tat : now_ns;
    const uint64_t next = base + interval_ns_;
    if (next - now_ns > tolerance_ns_) {
      // Denied: nothing written. Admitted again once now' >= tat + T - B*T.
      out->admitted = false;
      out->remaining = 0;
      out->retry_after_ns = next - tolerance_ns_ - now_ns;
      out->reset_ns = base - now_ns;
      return Step::kDone;
    }
    if (cell.compare_exchange_weak(tat, next, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      out->admitted = true;
      out->remaining = (now_ns + tolerance_ns_ - next) / interval_ns_;
      out->retry_after_ns = 0;
      out->reset_ns = next - now_ns;
      return Step::kDone;
    }
    // `tat` now holds the current value: another request of this key (or a hand-over) won.
  }
}

Decision GcraTable::admitFingerprint(uint64_t fp, uint64_t now_ns) {
  // The group from the high bits (the low bits are the fingerprint's too; any bits are uniform).
  const size_t group_index = static_cast<size_t>(fp >> 32) & (group_count_ - 1);
  Group& g = groups_[group_index];
  Decision out;
  for (;;) {
    int slot = find(g, fp);
    if (slot < 0) slot = insert(g, group_index, fp, now_ns);
    if (spend(g, slot, fp, now_ns, &out) == Step::kDone) return out;
  }
}

}  // namespace sluice::filters::rate_limit
