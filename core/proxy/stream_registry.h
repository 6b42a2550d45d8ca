// Live streams by number, for sluice_filter_host_api.post() from any thread (ABI 1.2).
//
// A stream reference (sluice_stream_ref) is ((worker index + 1) << 48) | stream id, where the id
// counts up per worker from 1 and is never reused, so a reference kept after its stream ended
// names nothing (it is not a pointer). post() finds the worker by index in a process-wide table
// (under a mutex: any thread), queues the callback with the worker's dispatcher
// (event::Worker::post), and on the worker looks the id up in that worker's map of live
// streams: the callback gets the stream, or NULL when it ended.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "core/api/filter.h"
#include "core/event/worker.h"

namespace sluice::proxy {

class Stream;

class StreamRegistry {
 public:
  // Registers this worker's registry in the process-wide table (its index must be free).
  explicit StreamRegistry(event::Worker& worker);
  // Unregisters: posts for this worker return -1 from now on.
  ~StreamRegistry();
  StreamRegistry(const StreamRegistry&) = delete;
  StreamRegistry& operator=(const StreamRegistry&) = delete;

  // Worker thread. A new reference for `stream` (valid until remove()).
  sluice_stream_ref add(Stream* stream);
  void remove(sluice_stream_ref ref);
  Stream* find(sluice_stream_ref ref) const;

  // Any thread: see sluice_filter_host_api.post.
  static int post(sluice_stream_ref ref, sluice_post_fn fn, void* arg);

 private:
  event::Worker& worker_;
  uint64_t next_id_ = 0;
  absl::flat_hash_map<uint64_t, Stream*> live_;
};

}  // namespace sluice::proxy
