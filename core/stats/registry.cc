#include "core/stats/registry.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <new>
#include <set>

#include "core/common/log.h"
#include "core/stats/text_format.h"

namespace sluice::stats {

// One labeled series: `size` slots from `base` in every Store. Gives them back when the last
// handle goes.
struct Series {
  Series(const Registry* r, uint32_t b, uint32_t s) : registry(r), base(b), size(s) {}
  ~Series() { registry->release(base, size); }
  const Registry* registry;
  uint32_t base;
  uint32_t size;
};

struct Registry::FamilyData {
  FamilySpec spec;
  Buckets buckets;                      // histograms: the bounds, in the family's unit
  std::vector<uint64_t> bounds_micros;  // the same, in micro-units (what observe compares)
  uint32_t slots = 1;                   // per series: 1, or buckets + 1 (+Inf) + 1 (sum)
  std::map<std::vector<std::string>, std::weak_ptr<const Series>> series;
};

namespace {

std::string checkSpec(const FamilySpec& f) {
  if (!isMetricName(f.name)) return "invalid metric name '" + f.name + "'";
  std::set<std::string> seen;
  for (const std::string& l : f.labels) {
    if (!isLabelName(l) || (f.kind == Kind::kHistogram && l == "le")) {
      return "metric '" + f.name + "': invalid label name '" + l + "'";
    }
    if (!seen.insert(l).second) return "metric '" + f.name + "': label '" + l + "' twice";
  }
  if (f.kind == Kind::kHistogram) {
    const Buckets& b = f.buckets != nullptr ? *f.buckets : latencyBuckets();
    if (b.empty() || b.size() > 64) return "metric '" + f.name + "': 1 to 64 buckets";
    for (size_t i = 0; i < b.size(); ++i) {
      if (!std::isfinite(b[i]) || b[i] < 0 || (i > 0 && b[i] <= b[i - 1])) {
        return "metric '" + f.name + "': buckets must be finite, >= 0 and ascending";
      }
    }
  }
  return "";
}

}  // namespace

const Buckets& latencyBuckets() {
  static const Buckets kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                   0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
  return kBuckets;
}

Registry::Registry() {
  stores_.push_back(std::make_unique<Store>(true));
  shared_ = stores_.front().get();
}

Registry::~Registry() {
  if (t_registry_ == this) bindThread(nullptr);
}

Registry& defaultRegistry() {
  // Never destroyed: handles in objects torn down at exit (or on late threads) may still use it.
  alignas(Registry) static unsigned char storage[sizeof(Registry)];
  static Registry* registry = ::new (storage) Registry();
  return *registry;
}

Store* Registry::newThreadStore() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto store = std::make_unique<Store>(false);
  for (uint32_t c = 0; c * Store::kChunkSlots < next_slot_; ++c) store->ensureChunk(c);
  stores_.push_back(std::move(store));
  return stores_.back().get();
}

void Registry::bindThread(Store* store) const {
  t_registry_ = store != nullptr ? this : nullptr;
  t_store_ = store;
}

void Registry::release(uint32_t base, uint32_t size) const {
  std::lock_guard<std::mutex> lock(released_mutex_);
  released_.emplace_back(base, size);
}

void Registry::reclaimLocked() const {
  std::vector<std::pair<uint32_t, uint32_t>> released;
  {
    std::lock_guard<std::mutex> lock(released_mutex_);
    released.swap(released_);
  }
  // No handle is left, so nothing writes these slots any more: zero them for their next series.
  for (const auto& [base, size] : released) {
    for (const auto& store : stores_) {
      for (uint32_t i = 0; i < size; ++i) store->set(base + i, 0);
    }
    free_[size].push_back(base);
  }
  if (released.empty()) return;
  // Forget the label sets of dead series (a host gone for good must not cost memory forever).
  for (const auto& [name, data] : families_) {
    for (auto it = data->series.begin(); it != data->series.end();) {
      it = it->second.expired() ? data->series.erase(it) : std::next(it);
    }
  }
}

bool Registry::allocate(uint32_t size, uint32_t* base) {
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    *base = it->second.back();
    it->second.pop_back();
    return true;
  }
  // A series' slots never straddle two chunks (a histogram update finds all of them from one).
  uint32_t offset = next_slot_ & (Store::kChunkSlots - 1);
  if (offset + size > Store::kChunkSlots) next_slot_ += Store::kChunkSlots - offset;
  uint32_t chunk = next_slot_ >> Store::kChunkBits;
  if (chunk >= Store::kMaxChunks) return false;
  for (const auto& store : stores_) store->ensureChunk(chunk);
  *base = next_slot_;
  next_slot_ += size;
  return true;
}

bool Registry::declare(const FamilySpec& family, std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string why = checkSpec(family);
  auto it = families_.find(family.name);
  if (why.empty() && it != families_.end()) {
    const FamilySpec& have = it->second->spec;
    const Buckets& b = family.buckets != nullptr ? *family.buckets : latencyBuckets();
    if (have.kind != family.kind || have.labels != family.labels ||
        (family.kind == Kind::kHistogram && it->second->buckets != b)) {
      why = "metric '" + family.name + "' already exists as a " + kindName(have.kind) +
            " with other labels or buckets";
    }
  }
  if (!why.empty()) {
    if (error != nullptr) *error = why;
    return false;
  }
  if (it == families_.end()) {
    auto data = std::make_unique<FamilyData>();
    data->spec = family;
    data->spec.buckets = nullptr;
    if (family.kind == Kind::kHistogram) {
      data->buckets = family.buckets != nullptr ? *family.buckets : latencyBuckets();
      for (double b : data->buckets) {
        data->bounds_micros.push_back(static_cast<uint64_t>(std::llround(b * 1e6)));
      }
      data->slots = static_cast<uint32_t>(data->buckets.size()) + 2;
    }
    families_.emplace(family.name, std::move(data));
  }
  return true;
}

std::shared_ptr<const Series> Registry::resolve(const FamilySpec& family,
                                                const std::vector<std::string>& values,
                                                const FamilyData** out) {
  std::string error;
  if (!declare(family, &error)) {
    SLUICE_LOG(kError, "stats: ", error, " (series not recorded)");
    return nullptr;
  }
  if (values.size() != family.labels.size()) {
    SLUICE_LOG(kError, "stats: metric '", family.name, "' takes ", family.labels.size(),
               " label values, got ", values.size());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  reclaimLocked();
  FamilyData& data = *families_.at(family.name);
  *out = &data;
  std::weak_ptr<const Series>& slot = data.series[values];
  if (auto live = slot.lock()) return live;
  uint32_t base = 0;
  if (!allocate(data.slots, &base)) {
    SLUICE_LOG(kError, "stats: out of metric slots; metric '", family.name, "' not recorded");
    data.series.erase(values);
    return nullptr;
  }
  auto series = std::make_shared<const Series>(this, base, data.slots);
  slot = series;
  return series;
}

Counter Registry::counter(const FamilySpec& family, const std::vector<std::string>& values) {
  Counter c;
  const FamilyData* data = nullptr;
  if (family.kind != Kind::kCounter) return c;
  c.series_ = resolve(family, values, &data);
  if (c.series_ != nullptr) {
    c.registry_ = this;
    c.slot_ = c.series_->base;
  }
  return c;
}

Gauge Registry::gauge(const FamilySpec& family, const std::vector<std::string>& values) {
  Gauge g;
  const FamilyData* data = nullptr;
  if (family.kind != Kind::kGauge) return g;
  g.series_ = resolve(family, values, &data);
  if (g.series_ != nullptr) {
    g.registry_ = this;
    g.slot_ = g.series_->base;
  }
  return g;
}

Gauge Registry::sharedGauge(const FamilySpec& family, const std::vector<std::string>& values) {
  Gauge g = gauge(family, values);
  g.shared_ = true;
  return g;
}

Histogram Registry::histogram(const FamilySpec& family, const std::vector<std::string>& values) {
  Histogram h;
  const FamilyData* data = nullptr;
  if (family.kind != Kind::kHistogram) return h;
  h.series_ = resolve(family, values, &data);
  if (h.series_ != nullptr) {
    h.registry_ = this;
    h.slot_ = h.series_->base;
    h.bounds_ = &data->bounds_micros;  // FamilyData never moves nor goes away
  }
  return h;
}

uint64_t Registry::sumSlot(uint32_t slot) const {
  uint64_t total = 0;
  for (const auto& store : stores_) total += store->read(slot);
  return total;
}

void Registry::writePrometheus(std::string* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  reclaimLocked();
  for (const auto& [name, data] : families_) {
    const FamilySpec& spec = data->spec;
    appendHeader(out, name, spec.help, spec.kind);
    for (const auto& [values, weak] : data->series) {
      std::shared_ptr<const Series> series = weak.lock();
      if (series == nullptr) continue;  // its slots are reclaimed once released
      Labels labels;
      for (size_t i = 0; i < values.size(); ++i) labels.emplace_back(spec.labels[i], values[i]);
      if (spec.kind == Kind::kCounter) {
        appendSample(out, name, labels, std::to_string(sumSlot(series->base)));
      } else if (spec.kind == Kind::kGauge) {
        appendSample(out, name, labels,
                     std::to_string(static_cast<int64_t>(sumSlot(series->base))));
      } else {
        const size_t n = data->buckets.size();
        uint64_t cumulative = 0;
        labels.emplace_back("le", "");
        for (size_t b = 0; b <= n; ++b) {
          cumulative += sumSlot(series->base + static_cast<uint32_t>(b));
          labels.back().second = b < n ? formatValue(data->buckets[b]) : "+Inf";
          appendSample(out, name + "_bucket", labels, std::to_string(cumulative));
        }
        labels.pop_back();
        double sum = static_cast<double>(sumSlot(series->base + static_cast<uint32_t>(n) + 1));
        appendSample(out, name + "_sum", labels, formatValue(sum / 1e6));
        appendSample(out, name + "_count", labels, std::to_string(cumulative));
      }
    }
  }
}

int64_t Registry::sum(const std::string& family, std::string_view label,
                      std::string_view value) const {
  LabelMatch match;
  if (!label.empty()) match.emplace_back(label, value);
  return sum(family, match);
}

int64_t Registry::sum(const std::string& family, const LabelMatch& match) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = families_.find(family);
  if (it == families_.end() || it->second->spec.kind == Kind::kHistogram) return 0;
  const FamilySpec& spec = it->second->spec;
  std::vector<std::pair<size_t, std::string_view>> wanted;  // (label index, value)
  for (const auto& [label, value] : match) {
    auto at = std::find(spec.labels.begin(), spec.labels.end(), label);
    if (at == spec.labels.end()) return 0;
    wanted.emplace_back(static_cast<size_t>(at - spec.labels.begin()), value);
  }
  int64_t total = 0;
  for (const auto& [values, weak] : it->second->series) {
    bool matches = true;
    for (const auto& [index, value] : wanted) matches = matches && values[index] == value;
    if (!matches) continue;
    if (auto series = weak.lock()) total += static_cast<int64_t>(sumSlot(series->base));
  }
  return total;
}

bool Registry::histogramSum(const std::string& family, std::string_view label,
                            std::string_view value, HistogramSnapshot* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = families_.find(family);
  if (it == families_.end() || it->second->spec.kind != Kind::kHistogram) return false;
  const FamilyData& data = *it->second;
  size_t index = data.spec.labels.size();
  for (size_t i = 0; i < data.spec.labels.size(); ++i) {
    if (data.spec.labels[i] == label) index = i;
  }
  if (!label.empty() && index == data.spec.labels.size()) return false;
  const size_t n = data.buckets.size();
  out->bounds = data.buckets;
  out->counts.assign(n + 1, 0);
  uint64_t sum_micros = 0;
  for (const auto& [values, weak] : data.series) {
    if (!label.empty() && values[index] != value) continue;
    std::shared_ptr<const Series> series = weak.lock();
    if (series == nullptr) continue;
    for (size_t b = 0; b <= n; ++b)
      out->counts[b] += sumSlot(series->base + static_cast<uint32_t>(b));
    sum_micros += sumSlot(series->base + static_cast<uint32_t>(n) + 1);
  }
  out->sum = static_cast<double>(sum_micros) / 1e6;
  return true;
}

uint64_t HistogramSnapshot::count() const {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  return total;
}

size_t Registry::seriesCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [name, data] : families_) {
    for (const auto& [values, weak] : data->series) n += weak.expired() ? 0 : 1;
  }
  return n;
}

void Store::ensureChunk(uint32_t index) {
  if (chunks_[index].load(std::memory_order_relaxed) != nullptr) return;
  auto chunk = std::make_unique<std::atomic<uint64_t>[]>(kChunkSlots);
  for (uint32_t i = 0; i < kChunkSlots; ++i) chunk[i].store(0, std::memory_order_relaxed);
  chunks_[index].store(chunk.get(), std::memory_order_release);
  owned_.push_back(std::move(chunk));
}

}  // namespace sluice::stats
