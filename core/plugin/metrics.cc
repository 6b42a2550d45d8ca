#include "core/plugin/metrics.h"

#include <cstring>

#include "core/plugin/plugin.h"
#include "core/stats/text_format.h"

namespace sluice::plugin {
namespace {

constexpr size_t kMaxName = 100;
constexpr size_t kMaxLabels = 8;

std::string str(sluice_str s) {
  return s.data == nullptr ? std::string() : std::string(s.data, s.len);
}

sluice_metric* fail(sluice_error* err, const std::string& message) {
  if (err != nullptr && err->message != nullptr && err->capacity > 0) {
    size_t n = std::min(message.size(), err->capacity - 1);
    std::memcpy(err->message, message.data(), n);
    err->message[n] = '\0';
  }
  return nullptr;
}

sluice_metric* declare(const void* host_ctx, const sluice_metric_spec* spec, sluice_error* err) {
  const auto* library = static_cast<const Library*>(host_ctx);
  if (library == nullptr || spec == nullptr) return fail(err, "metrics: no host context or spec");
  PluginMetrics* into = library->declaring();
  if (into == nullptr) {
    return fail(err, "metrics: declare() is only allowed during config_create (main thread)");
  }
  if (spec->struct_size < offsetof(sluice_metric_spec, bucket_count) + sizeof(size_t)) {
    return fail(err, "metrics: sluice_metric_spec too small");
  }
  const std::string name = str(spec->name);
  if (name.size() > kMaxName || !stats::isLabelName(name)) {
    return fail(err, "metrics: invalid metric name '" + name + "' (want [A-Za-z_][A-Za-z0-9_]*)");
  }
  if (spec->label_count > kMaxLabels ||
      (spec->label_count > 0 && (spec->label_names == nullptr || spec->label_values == nullptr))) {
    return fail(err, "metrics: '" + name + "': at most 8 labels, with names and values");
  }
  stats::FamilySpec family{
      stats::Kind::kCounter, pluginMetricName(library->name(), name), str(spec->help), {}};
  std::vector<std::string> values;
  for (size_t i = 0; i < spec->label_count; ++i) {
    family.labels.push_back(str(spec->label_names[i]));
    values.push_back(str(spec->label_values[i]));
  }
  stats::Buckets buckets;
  switch (spec->kind) {
    case SLUICE_METRIC_COUNTER:
      break;
    case SLUICE_METRIC_GAUGE:
      family.kind = stats::Kind::kGauge;
      break;
    case SLUICE_METRIC_HISTOGRAM:
      family.kind = stats::Kind::kHistogram;
      if (spec->buckets != nullptr && spec->bucket_count > 0) {
        buckets.assign(spec->buckets, spec->buckets + spec->bucket_count);
        family.buckets = &buckets;
      }
      break;
    default:
      return fail(err, "metrics: '" + name + "': unknown kind " + std::to_string(spec->kind));
  }
  stats::Registry& registry = stats::defaultRegistry();
  std::string why;
  if (!registry.declare(family, &why)) return fail(err, "metrics: " + why);
  auto metric = std::make_unique<sluice_metric>();
  metric->kind = family.kind;
  if (family.kind == stats::Kind::kCounter) {
    metric->counter = registry.counter(family, values);
  } else if (family.kind == stats::Kind::kGauge) {
    metric->gauge = registry.sharedGauge(family, values);
  } else {
    metric->histogram = registry.histogram(family, values);
  }
  into->push_back(std::move(metric));
  return into->back().get();
}

void add(sluice_metric* m, int64_t delta) {
  if (m == nullptr) return;
  if (m->kind == stats::Kind::kCounter && delta > 0) m->counter.inc(static_cast<uint64_t>(delta));
  if (m->kind == stats::Kind::kGauge) m->gauge.add(delta);
}

void set(sluice_metric* m, int64_t value) {
  if (m != nullptr && m->kind == stats::Kind::kGauge) m->gauge.set(value);
}

void observe(sluice_metric* m, double value) {
  if (m != nullptr && m->kind == stats::Kind::kHistogram) m->histogram.observe(value);
}

const sluice_metrics_api kMetricsApi = {
    sizeof(sluice_metrics_api), &declare, &add, &set, &observe,
};

}  // namespace

const sluice_metrics_api* metricsApi() { return &kMetricsApi; }

std::string pluginMetricName(const std::string& plugin, const std::string& name) {
  std::string out = "sluice_plugin_";
  for (char c : plugin) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out + "_" + name;
}

}  // namespace sluice::plugin
