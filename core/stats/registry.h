// Metrics: labeled families of counters, gauges and fixed-bucket histograms, stored per thread
// (store.h) and summed when scraped. Interface; registry.cc implements it.
//
// Adding a family is a declaration in a header and its spec in one .cc file (see families.h for
// the core's; an inline variable in a header would be initialised by every includer):
//
//   extern const stats::FamilySpec kTlsHandshakes;                      // the header
//   const stats::FamilySpec kTlsHandshakes{stats::Kind::kCounter,       // one .cc file
//       "sluice_tls_handshakes_total", "TLS handshakes by outcome.", {"listener", "result"}};
//
// and one call wherever the labeled thing is created (a listener, a cluster, a host), never per
// request: resolving a series takes the registry's lock and looks the labels up by string.
//
//   stats::Counter full = stats::defaultRegistry().counter(kTlsHandshakes, {name, "full"});
//   ...
//   full.inc();  // on the request path: a relaxed load + store in this thread's Store
//
// Labels: values must come from bounded sets known when the series is created (listener,
// route, cluster, host address, status class, plugin name, a fixed list of results) — never a
// path, client address or header value: each distinct value set is a series kept in memory and
// exported on every scrape.
//
// Lifetimes: a handle (Counter, Gauge, Histogram) shares ownership of its series. Resolving the
// same family and label values again, while a handle is alive, returns the same series (so a
// listener rebuilt by a reload keeps counting where it was). When the last handle of a series
// goes, the series disappears from the exposition and its slots are reused later; that is how the
// series of a removed host go away. Handles may be copied and dropped on any thread.
//
// Threads: resolving (counter/gauge/histogram) and scraping (writePrometheus, sum) take the
// registry's lock and may run on any thread. Updates run on any thread without a lock: on a
// thread bound to a Store of this registry (bindThread: the workers, the main thread) they write
// that Store with a plain load + store; on any other thread they write the shared Store with an
// atomic read-modify-write. A default-constructed handle is detached: updates do nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/stats/store.h"

namespace sluice::stats {

enum class Kind { kCounter, kGauge, kHistogram };

// Upper bounds of a histogram's buckets, in its unit, ascending (+Inf is implied).
using Buckets = std::vector<double>;
// 0.5 ms .. 60 s: request and upstream latencies (`_seconds` families).
const Buckets& latencyBuckets();

// A family: name (`sluice_..._total` for counters, `_seconds` for durations), help text, kind,
// label names, and for histograms the buckets (null = latencyBuckets()).
struct FamilySpec {
  Kind kind;
  std::string name;
  std::string help;
  std::vector<std::string> labels;
  const Buckets* buckets = nullptr;
};

class Registry;
struct Series;  // registry.cc

// (label name, value) pairs a series must all have, for Registry::sum.
using LabelMatch = std::vector<std::pair<std::string_view, std::string_view>>;

// A histogram's buckets summed at one moment: `bounds` are the finite upper bounds in the family's
// unit, `counts[i]` the observations in bucket i alone (not cumulative; one more entry than
// `bounds` for +Inf), `sum` their total in the family's unit. See quantile.h.
struct HistogramSnapshot {
  Buckets bounds;
  std::vector<uint64_t> counts;
  double sum = 0;
  uint64_t count() const;
};

class Counter {
 public:
  Counter() = default;
  void inc(uint64_t n = 1) const;

 private:
  friend class Registry;
  const Registry* registry_ = nullptr;
  uint32_t slot_ = 0;
  std::shared_ptr<const Series> series_;
};

// Sums over threads: add() from several threads adds up; set() is meaningful only when one
// thread owns the gauge (the value is that thread's store plus the others' adds) — or for a
// gauge from Registry::sharedGauge, which is one atomic every thread updates (exact set(), but
// each update is an atomic operation on a shared cache line).
class Gauge {
 public:
  Gauge() = default;
  void add(int64_t delta) const;
  void inc() const { add(1); }
  void dec() const { add(-1); }
  void set(int64_t value) const;

 private:
  friend class Registry;
  const Store& store() const;
  const Registry* registry_ = nullptr;
  uint32_t slot_ = 0;
  bool shared_ = false;
  std::shared_ptr<const Series> series_;
};

class Histogram {
 public:
  Histogram() = default;
  // Counts one observation of `micros` millionths of the family's unit (µs for `_seconds`).
  void observeMicros(uint64_t micros) const;
  void observe(double value) const;  // in the family's unit; negative counts as 0

 private:
  friend class Registry;
  const Registry* registry_ = nullptr;
  uint32_t slot_ = 0;
  const std::vector<uint64_t>* bounds_ = nullptr;  // bucket bounds in micro-units
  std::shared_ptr<const Series> series_;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The series of `family` with these label values (one per label name, in order), created on
  // first use. A detached handle (logged) when the family clashes with an earlier one of the same
  // name (kind, labels or buckets differ), the value count is wrong, or the slots ran out.
  Counter counter(const FamilySpec& family, const std::vector<std::string>& values);
  Gauge gauge(const FamilySpec& family, const std::vector<std::string>& values);
  // A gauge kept in the shared store only (see Gauge).
  Gauge sharedGauge(const FamilySpec& family, const std::vector<std::string>& values);
  Histogram histogram(const FamilySpec& family, const std::vector<std::string>& values);
  // Registers `family` (so it is exported, with no series yet). False when it clashes with a
  // family of the same name; *error says how.
  bool declare(const FamilySpec& family, std::string* error);

  // A new per-thread Store (lives as long as the registry), and binding the calling thread to
  // it: that thread's updates of this registry's metrics go there. nullptr unbinds.
  Store* newThreadStore();
  void bindThread(Store* store) const;

  // The Prometheus text exposition (format 0.0.4) of every family, appended to *out.
  void writePrometheus(std::string* out) const;
  // Sum over every series of `family` whose label `label` is `value` (every series when `label`
  // is empty); 0 for an unknown family. Counters and gauges.
  int64_t sum(const std::string& family, std::string_view label = {},
              std::string_view value = {}) const;
  // Same, over the series matching every (label, value) pair of `match` (all series when empty;
  // 0 when a label is not the family's).
  int64_t sum(const std::string& family, const LabelMatch& match) const;
  // Sum over every series of histogram `family` whose label `label` is `value` (every series
  // when `label` is empty), as a snapshot (histogram.h). False for an unknown family or one that
  // is not a histogram.
  bool histogramSum(const std::string& family, std::string_view label, std::string_view value,
                    HistogramSnapshot* out) const;
  // Live series (all families), for tests and a sanity check on label cardinality.
  size_t seriesCount() const;

  // The store updates on this thread go to.
  const Store& threadStore() const {
    return t_registry_ == this && t_store_ != nullptr ? *t_store_ : *shared_;
  }
  const Store& sharedStore() const { return *shared_; }

  // Internal (registry.cc): a dead series gives its slots back (any thread, no registry lock).
  void release(uint32_t base, uint32_t size) const;

 private:
  struct FamilyData;
  std::shared_ptr<const Series> resolve(const FamilySpec& family,
                                        const std::vector<std::string>& values,
                                        const FamilyData** out);
  bool allocate(uint32_t size, uint32_t* base);
  void reclaimLocked() const;
  uint64_t sumSlot(uint32_t slot) const;

  static inline thread_local const Registry* t_registry_ = nullptr;
  static inline thread_local const Store* t_store_ = nullptr;

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<FamilyData>> families_;
  std::vector<std::unique_ptr<Store>> stores_;  // [0] is the shared store
  const Store* shared_ = nullptr;
  uint32_t next_slot_ = 0;
  mutable std::map<uint32_t, std::vector<uint32_t>> free_;  // size → bases

  mutable std::mutex released_mutex_;  // only for release(): never held while scraping
  mutable std::vector<std::pair<uint32_t, uint32_t>> released_;
};

// The process's registry: the core's families and the plugins' metrics.
Registry& defaultRegistry();

inline void Counter::inc(uint64_t n) const {
  if (registry_ != nullptr) registry_->threadStore().add(slot_, n);
}
inline const Store& Gauge::store() const {
  return shared_ ? registry_->sharedStore() : registry_->threadStore();
}
inline void Gauge::add(int64_t delta) const {
  if (registry_ != nullptr) store().add(slot_, static_cast<uint64_t>(delta));
}
inline void Gauge::set(int64_t value) const {
  if (registry_ != nullptr) store().set(slot_, static_cast<uint64_t>(value));
}
inline void Histogram::observeMicros(uint64_t micros) const {
  if (registry_ == nullptr) return;
  const std::vector<uint64_t>& b = *bounds_;
  size_t i = 0;
  while (i < b.size() && micros > b[i]) ++i;  // a dozen compares at most
  const Store& store = registry_->threadStore();
  std::atomic<uint64_t>* slots = store.slots(slot_);
  store.add(slots[i], 1);
  store.add(slots[b.size() + 1], micros);
}
inline void Histogram::observe(double value) const {
  observeMicros(value > 0 ? static_cast<uint64_t>(value * 1e6 + 0.5) : 0);
}

}  // namespace sluice::stats
