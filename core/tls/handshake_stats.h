// Handshake counters of one worker: written by that worker only (relaxed load+store, no RMW),
// read by the admin thread when it sums the workers.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/tls/tls_io.h"

namespace sluice::tls {

struct HandshakeStats {
  static constexpr int kReasons = static_cast<int>(HandshakeFailure::kOther) + 1;

  std::atomic<uint64_t> full{0};
  std::atomic<uint64_t> resumed{0};
  std::atomic<uint64_t> failed[kReasons] = {};  // by HandshakeFailure

  void onHandshake(bool was_resumed) { bump(was_resumed ? resumed : full); }
  void onFailure(HandshakeFailure why) { bump(failed[static_cast<int>(why)]); }

 private:
  static void bump(std::atomic<uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

}  // namespace sluice::tls
