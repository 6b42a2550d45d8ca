// Plugin metrics (sluice_metrics_api, ABI 1.1): what stands behind a plugin's sluice_metric
// handle, and the host table. Declarations made during a config_create are collected on the
// plugin's Library and handed to the config Instance it creates, which owns them until its
// config_destroy has returned.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/stats/registry.h"

// The C handle plugins hold; opaque to them.
struct sluice_metric {
  sluice::stats::Kind kind;
  sluice::stats::Counter counter;
  sluice::stats::Gauge gauge;  // a shared gauge: exact set() from any thread
  sluice::stats::Histogram histogram;
};

namespace sluice::plugin {

using PluginMetrics = std::vector<std::unique_ptr<sluice_metric>>;

// The table in every plugin's sluice_host_api.metrics. Its declare() records into the
// PluginMetrics its host_ctx (a Library) is collecting, and refuses when none is.
const sluice_metrics_api* metricsApi();

// "sluice_plugin_<plugin>_<name>", every character of `plugin` outside [A-Za-z0-9_] made '_'.
std::string pluginMetricName(const std::string& plugin, const std::string& name);

}  // namespace sluice::plugin
