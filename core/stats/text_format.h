// The Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): `# HELP`, `# TYPE`, then one
// line per sample, `name{label="value",...} value`. Used by the Registry for stored metrics and
// by the admin listener for values it computes at scrape time (config version, start time).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/stats/registry.h"

namespace sluice::stats {

// The Content-Type of the exposition.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

using Labels = std::vector<std::pair<std::string, std::string>>;

// "counter", "gauge", "histogram".
const char* kindName(Kind kind);
// True for a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) and label name ([a-zA-Z_][a-zA-Z0-9_]*,
// not starting with "__").
bool isMetricName(std::string_view name);
bool isLabelName(std::string_view name);
// A label value with `\` `"` and newline escaped; help text with `\` and newline escaped.
std::string escapeLabelValue(std::string_view value);
std::string escapeHelp(std::string_view help);
// A sample value: integers exactly, other numbers with up to 9 significant digits; "+Inf",
// "-Inf", "NaN".
std::string formatValue(double value);

// Appends "# HELP name help\n# TYPE name kind\n".
void appendHeader(std::string* out, std::string_view name, std::string_view help, Kind kind);
// Appends one sample line. `value` is already formatted (std::to_string or formatValue).
void appendSample(std::string* out, std::string_view name, const Labels& labels,
                  std::string_view value);

}  // namespace sluice::stats
