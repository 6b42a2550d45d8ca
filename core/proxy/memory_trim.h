// Gives the memory of a connection burst back to the system once the burst is over.
//
// glibc's malloc keeps freed memory in its arenas (one per thread that allocates: each worker
// has its own) and returns only a free block at the very top of a heap to the kernel. After a
// burst of thousands of connections closes, the freed connection objects lie scattered through
// the worker's heap, and RSS stays near the burst's peak (measured: 10 MB idle, 18 MB after one
// burst of 5,000 connections, 29 MB after seven with `Connection: close`; bench/memory).
// malloc_trim(0) walks every arena and hands each whole free page back (MADV_DONTNEED) without
// moving any live object.
//
// A worker calls onConnectionCount() whenever its number of downstream connections changes;
// once the count has fallen to a quarter of the peak since the last trim, by at least
// kMinDrop connections, a trim runs kDelayMs later (after the deferred deletes of the last
// closed connections, and once per burst however it ends). In steady traffic the count never
// falls that far and nothing runs; a trim costs a few milliseconds on the worker thread, once
// per burst. Parking does the same for the connections' buffers: once kMinDrop connections
// have been parked since the last trim (their transports freed, in the pages where the burst
// of them allocated), a trim runs kDelayMs after the parking pauses, at most once per
// kParkTrimIntervalMs (clients that go idle and come back all the time would otherwise trim
// every few seconds). Worker thread only.
#pragma once

#include <event2/event.h>

#include <cstddef>
#include <cstdint>

namespace sluice::proxy {

class MemoryTrim {
 public:
  static constexpr size_t kMinDrop = 1024;  // connections: smaller drops are left alone
  static constexpr int kDelayMs = 1000;
  static constexpr uint32_t kParkTrimIntervalMs = 10000;

  // `base`: the worker's event loop, which runs the trim.
  explicit MemoryTrim(event_base* base);
  ~MemoryTrim();
  MemoryTrim(const MemoryTrim&) = delete;
  MemoryTrim& operator=(const MemoryTrim&) = delete;

  // The worker now has `count` downstream connections (parked ones included: they are what a
  // burst of keep-alive clients leaves behind).
  void onConnectionCount(size_t count);
  // A connection was parked (IdleParker).
  void onParked();
  // Trims now (SIGUSR2, server.h), as the timer would: a pending trim is cancelled and the next
  // burst is measured from what is open now. malloc_trim walks every arena, this worker's and the
  // others'.
  void trimNow();
  // How many trims ran (for tests).
  size_t trims() const { return trims_; }

 private:
  static void onTimer(evutil_socket_t, short, void* arg);

  ::event* timer_;
  static uint64_t nowMs();  // CLOCK_MONOTONIC_COARSE
  size_t peak_ = 0;         // the most connections since the last trim
  size_t parked_ = 0;       // connections parked since the last trim
  uint64_t last_trim_ms_ = 0;
  bool armed_ = false;
  size_t trims_ = 0;
};

}  // namespace sluice::proxy
