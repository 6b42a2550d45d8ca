// sluice C++ SDK — plugin metrics (ABI 1.1, sluice_metrics_api in core/api/common.h).
//
// Declare in the config class's constructor (the only time the host accepts declarations), keep
// the handles in the config object, update them from any hook on any thread:
//
//   struct MyConfig {
//     MyConfig(const sluice::sdk::ConfigNode& node, const sluice::sdk::Host& host) {
//       sluice::sdk::Metrics metrics(host);
//       hits = metrics.counter("hits_total", "Requests seen.", {{"kind", "api"}});
//       depth = metrics.gauge("queue_depth", "Items waiting.");
//       took = metrics.histogram("lookup_seconds", "Lookup time.");
//     }
//     sluice::sdk::Counter hits;       // exported as sluice_plugin_<plugin>_hits_total{kind="api"}
//     sluice::sdk::Gauge depth;
//     sluice::sdk::Histogram took;
//   };
//   ... hits.inc(); depth.set(n); took.observe(seconds);
//
// Handles are cheap to copy and valid until the config object is destroyed (config_destroy).
// A default-constructed handle, or one from a host without metrics (older than ABI 1.1, or a unit
// test's Host over nullptr), does nothing. Label values are fixed when declaring: declare one
// handle per value of a small known set; never build label values from requests.
// Update cost: see common.h (counters and histograms: a few ns on sluice's threads, an atomic
// RMW on the plugin's own threads; gauges: always one shared atomic).
// Header-only; includes only core/api/*.h and std headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/api/common.h"
#include "core/api/sdk/config.h"
#include "core/api/sdk/host.h"

namespace sluice::sdk {

// A series' label names and values, e.g. {{"result", "ok"}}; at most 8.
using MetricLabels = std::vector<std::pair<std::string_view, std::string_view>>;

// Only grows. Any thread.
class Counter {
 public:
  Counter() = default;
  void inc(uint64_t n = 1) const {
    if (metric_ != nullptr) api_->add(metric_, static_cast<int64_t>(n));
  }

 private:
  friend class Metrics;
  const sluice_metrics_api* api_ = nullptr;
  sluice_metric* metric_ = nullptr;
};

// Goes up and down; set() is exact from any thread. Any thread.
class Gauge {
 public:
  Gauge() = default;
  void set(int64_t value) const {
    if (metric_ != nullptr) api_->set(metric_, value);
  }
  void add(int64_t delta) const {
    if (metric_ != nullptr) api_->add(metric_, delta);
  }

 private:
  friend class Metrics;
  const sluice_metrics_api* api_ = nullptr;
  sluice_metric* metric_ = nullptr;
};

// Fixed buckets, a sum and a count. observe() takes the metric's unit (seconds for `_seconds`).
class Histogram {
 public:
  Histogram() = default;
  void observe(double value) const {
    if (metric_ != nullptr) api_->observe(metric_, value);
  }

 private:
  friend class Metrics;
  const sluice_metrics_api* api_ = nullptr;
  sluice_metric* metric_ = nullptr;
};

// Declares metrics. Main thread, inside the config class's constructor only.
class Metrics {
 public:
  explicit Metrics(const Host& host) : host_(host.raw()) {
    if (host_ != nullptr &&
        host_->struct_size >= offsetof(sluice_host_api, metrics) + sizeof(host_->metrics)) {
      api_ = host_->metrics;
    }
  }
  // False when the host has no metrics (handles then do nothing).
  bool available() const { return api_ != nullptr; }

  // `name`: [A-Za-z_][A-Za-z0-9_]* (counters end in _total, durations in _seconds). Throws
  // ConfigError when the host refuses (bad name or labels, or the name already declared with
  // another kind or other labels).
  Counter counter(std::string_view name, std::string_view help,
                  const MetricLabels& labels = {}) const {
    Counter c;
    declare(SLUICE_METRIC_COUNTER, name, help, labels, {}, &c.api_, &c.metric_);
    return c;
  }
  Gauge gauge(std::string_view name, std::string_view help, const MetricLabels& labels = {}) const {
    Gauge g;
    declare(SLUICE_METRIC_GAUGE, name, help, labels, {}, &g.api_, &g.metric_);
    return g;
  }
  // `buckets`: upper bounds, ascending (+Inf implied); empty = 0.5 ms .. 60 s in seconds.
  Histogram histogram(std::string_view name, std::string_view help, const MetricLabels& labels = {},
                      const std::vector<double>& buckets = {}) const {
    Histogram h;
    declare(SLUICE_METRIC_HISTOGRAM, name, help, labels, buckets, &h.api_, &h.metric_);
    return h;
  }

 private:
  static sluice_str str(std::string_view s) { return {s.data(), s.size()}; }
  void declare(sluice_metric_kind kind, std::string_view name, std::string_view help,
               const MetricLabels& labels, const std::vector<double>& buckets,
               const sluice_metrics_api** api, sluice_metric** out) const {
    if (api_ == nullptr) return;
    std::vector<sluice_str> names, values;
    for (const auto& [n, v] : labels) {
      names.push_back(str(n));
      values.push_back(str(v));
    }
    sluice_metric_spec spec{};
    spec.struct_size = sizeof(spec);
    spec.kind = kind;
    spec.name = str(name);
    spec.help = str(help);
    spec.label_names = names.data();
    spec.label_values = values.data();
    spec.label_count = labels.size();
    spec.buckets = buckets.empty() ? nullptr : buckets.data();
    spec.bucket_count = buckets.size();
    char message[256] = "";
    sluice_error err{message, sizeof(message), 0, 0};
    sluice_metric* m = api_->declare(host_->host_ctx, &spec, &err);
    if (m == nullptr) {
      throw ConfigError(message[0] != '\0' ? message : "metric refused by the host", 0, 0);
    }
    *api = api_;
    *out = m;
  }

  const sluice_host_api* host_ = nullptr;
  const sluice_metrics_api* api_ = nullptr;
};

}  // namespace sluice::sdk
