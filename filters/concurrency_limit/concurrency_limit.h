// concurrency_limit — at most `max` requests in flight per route, cluster or listener; 503 over.
//
// YAML (docs/configuration.md "### concurrency_limit" has the full reference):
//   filters:
//     - name: concurrency_limit
//       config:
//         max: 100            # in-flight requests allowed per key (integer >= 1), required
//         per: route          # route | cluster | listener
//         retry_after: 1      # Retry-After seconds on the 503 (0: no Retry-After)
//
// Over the limit: 503 with the gateway's JSON error body and `Retry-After`.
//
// A request takes a slot in onRequestHeaders and gives it back when it ends for any reason —
// completed, client gone, upstream error, timeout, answered by a later filter — in onLog (the
// host calls it exactly once per stream), or at the latest when the stream is destroyed. So the
// count is the number of requests between this filter and their end, including the time spent
// waiting for and streaming the response.
//
// The counters are the process's, one per (per, name) — e.g. "cluster users" — shared by every
// worker, by every concurrency_limit entry with the same `per`, and across reloads (requests
// that started on the old config still count against the new one); each entry compares the
// shared count with its own `max`. A request with no route (no route matched: its 404) counts
// under the empty name.
// At most 65,536 distinct names get their own counter; later ones share one overflow counter.
//
// Threads: counters are std::atomic (one fetch_add to take a slot, one fetch_sub to give it
// back); each worker caches the counter pointers it has used, so the registry's mutex is taken
// only for a name the worker has not seen yet.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/metrics.h"

namespace sluice::filters::concurrency_limit {

enum class Per { kRoute, kCluster, kListener };

// The process-wide in-flight counter for (per, name). Never freed while the plugin is loaded.
// Any thread.
std::atomic<int64_t>* sharedCounter(Per per, std::string_view name);

// Immutable after construction (main thread); read by every worker.
struct ConcurrencyLimitConfig {
  ConcurrencyLimitConfig(const sdk::ConfigNode& node, const sdk::Host& host);

  int64_t max = 0;
  Per per = Per::kRoute;
  uint64_t retry_after_s = 1;
  std::string retry_after;  // the header value ("" when 0)
  sdk::Counter admitted, rejected;
  sdk::Gauge in_flight;  // requests holding a slot through an entry of this `per` kind
};

// Per worker: the counters this worker has looked up. Worker thread only.
class ConcurrencyLimitWorker {
 public:
  explicit ConcurrencyLimitWorker(const ConcurrencyLimitConfig& config) : config_(config) {}
  std::atomic<int64_t>* counter(std::string_view name);

 private:
  const ConcurrencyLimitConfig& config_;
  std::unordered_map<std::string, std::atomic<int64_t>*> cache_;
  // The last name looked up and its counter: consecutive requests mostly share a route.
  std::string last_name_;
  std::atomic<int64_t>* last_ = nullptr;
};

// Per request: holds a slot from onRequestHeaders until onLog (or destruction).
class ConcurrencyLimitFilter : public sdk::Filter {
 public:
  ConcurrencyLimitFilter(const ConcurrencyLimitConfig& config, ConcurrencyLimitWorker& worker)
      : config_(config), worker_(worker) {}
  ~ConcurrencyLimitFilter() override { release(); }
  ConcurrencyLimitFilter(const ConcurrencyLimitFilter&) = delete;
  ConcurrencyLimitFilter& operator=(const ConcurrencyLimitFilter&) = delete;

  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;
  void onLog(const sdk::Stream& /*stream*/) override { release(); }

 private:
  void release() {
    if (held_ == nullptr) return;
    held_->fetch_sub(1, std::memory_order_acq_rel);
    config_.in_flight.add(-1);
    held_ = nullptr;
  }
  const ConcurrencyLimitConfig& config_;
  ConcurrencyLimitWorker& worker_;
  std::atomic<int64_t>* held_ = nullptr;  // the counter this request holds a slot of
};

}  // namespace sluice::filters::concurrency_limit
