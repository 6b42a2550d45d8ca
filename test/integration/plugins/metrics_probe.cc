// metrics_probe — a test filter plugin that declares one metric of each kind through the plugin
// metrics ABI (core/api/sdk/metrics.h) and updates them on every request, so tests can check
// that plugin metrics reach GET /stats/prometheus with their values.
//   filters: [{name: metrics_probe, config: {level: 7}}]
// declares sluice_plugin_metrics_probe_requests_total{path_class="any"} (+1 per request),
// sluice_plugin_metrics_probe_level (gauge, set to `level` at config time) and
// sluice_plugin_metrics_probe_work_seconds (histogram, observes 0.002 per request).
#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/metrics.h"

namespace {

struct ProbeConfig {
  ProbeConfig(const sluice::sdk::ConfigNode& node, const sluice::sdk::Host& host) {
    node.requireOnlyKeys({"level"});
    sluice::sdk::Metrics metrics(host);
    requests =
        metrics.counter("requests_total", "Requests seen by the probe.", {{"path_class", "any"}});
    level = metrics.gauge("level", "The configured level.");
    work = metrics.histogram("work_seconds", "Pretend work per request.");
    level.set(node.getInt("level", 0, -1000, 1000));
  }
  sluice::sdk::Counter requests;
  sluice::sdk::Gauge level;
  sluice::sdk::Histogram work;
};

class ProbeFilter : public sluice::sdk::Filter {
 public:
  explicit ProbeFilter(const ProbeConfig& config) : config_(config) {}
  sluice::sdk::FilterStatus onRequestHeaders(sluice::sdk::Stream&, bool) override {
    config_.requests.inc();
    config_.work.observe(0.002);
    return sluice::sdk::FilterStatus::kContinue;
  }

 private:
  const ProbeConfig& config_;
};

}  // namespace

SLUICE_FILTER_PLUGIN("metrics_probe", "1.0.0", ProbeConfig, ProbeFilter)
