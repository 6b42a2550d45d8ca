// Where metric values live: one Store per writing thread (each worker, the main thread) plus one
// shared Store for every other thread (plugin threads, the ZooKeeper client's). A value is a
// 64-bit slot; a metric series owns one slot (counter, gauge) or a few contiguous ones
// (histogram). The admin thread sums a slot over every Store of the registry when it scrapes.
//
// Writes: in a per-thread Store a slot has a single writer, so an update is a relaxed atomic load
// plus a relaxed store (no read-modify-write, no lock, no contention; the atomics only make the
// scraper's concurrent reads well-defined). In the shared Store an update is an atomic
// read-modify-write (fetch_add), since several threads may write the same slot.
//
// Memory: slots come in chunks of kChunkSlots, allocated by the Registry (under its lock) in every
// Store before a slot of that chunk is handed out; a chunk never moves, so writers never lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace sluice::stats {

class Store {
 public:
  static constexpr uint32_t kChunkBits = 12;
  static constexpr uint32_t kChunkSlots = 1u << kChunkBits;  // 4096 slots = 32 KiB
  static constexpr uint32_t kMaxChunks = 1024;               // at most 4M slots per registry

  // `shared`: updates are atomic read-modify-writes (any number of writing threads).
  explicit Store(bool shared) : shared_(shared) {}
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  bool shared() const { return shared_; }

  // The slots from `slot` to the end of its chunk. The slot's chunk must exist (the Registry
  // guarantees it for every slot it handed out).
  std::atomic<uint64_t>* slots(uint32_t slot) const {
    return chunks_[slot >> kChunkBits].load(std::memory_order_acquire) + (slot & (kChunkSlots - 1));
  }
  // Adds `n` (wrapping: a gauge adds a negative delta as its two's complement).
  void add(std::atomic<uint64_t>& v, uint64_t n) const {
    if (shared_) {
      v.fetch_add(n, std::memory_order_relaxed);
    } else {
      v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
  }
  void add(uint32_t slot, uint64_t n) const { add(*slots(slot), n); }
  void set(uint32_t slot, uint64_t value) const {
    slots(slot)->store(value, std::memory_order_relaxed);
  }
  uint64_t read(uint32_t slot) const { return slots(slot)->load(std::memory_order_relaxed); }

  // Registry only (under its lock): makes chunk `index` exist, zero-filled.
  void ensureChunk(uint32_t index);

 private:
  const bool shared_;
  std::atomic<std::atomic<uint64_t>*> chunks_[kMaxChunks] = {};
  std::vector<std::unique_ptr<std::atomic<uint64_t>[]>> owned_;
};

}  // namespace sluice::stats
