// A cluster's per-host concurrency limit and its wait queue: `max_requests_per_host`,
// `max_queue`, `queue_timeout_ms` (also valid in `cluster_defaults`). Semantics in
// core/upstream/wait_queue.h and docs/configuration.md#per-host-concurrency-and-the-wait-queue.
#include "core/config/parse.h"

namespace sluice::config::internal {

bool parseQueueSetting(const Field& f, Context& ctx, Cluster* out) {
  if (f.key == "max_requests_per_host") {
    readUint32(f, 0, 1000000, ctx, &out->max_requests_per_host);
  } else if (f.key == "max_queue") {
    readUint32(f, 0, 1000000, ctx, &out->max_queue);
  } else if (f.key == "queue_timeout_ms") {
    readTimeoutMs(f, ctx, &out->queue_timeout_ms);
  } else {
    return false;
  }
  return true;
}

}  // namespace sluice::config::internal
