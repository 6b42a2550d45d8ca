#include "core/server/admin_summary.h"

#include <cmath>
#include <optional>

#include "core/proxy/local_reply.h"
#include "core/stats/families.h"
#include "core/stats/quantile.h"
#include "core/stats/text_format.h"

namespace sluice::server {
namespace {

constexpr const char* kClasses[] = {"2xx", "3xx", "4xx", "5xx"};
constexpr double kQuantiles[] = {0.5, 0.9, 0.99};
constexpr const char* kQuantileNames[] = {"p50", "p90", "p99"};

std::string number(double v) { return std::isfinite(v) ? stats::formatValue(v) : "null"; }

std::string quoted(const std::string& s) { return "\"" + proxy::jsonEscape(s) + "\""; }

// {"count", "sum", "le", "counts", "p50", "p90", "p99"} of the duration histogram.
std::string histogramJson(const stats::HistogramSnapshot& h) {
  std::string out = "{\"count\": " + std::to_string(h.count()) + ", \"sum\": " + number(h.sum);
  out += ", \"le\": [";
  for (size_t i = 0; i < h.bounds.size(); ++i) out += (i ? ", " : "") + number(h.bounds[i]);
  out += "], \"counts\": [";
  for (size_t i = 0; i < h.counts.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(h.counts[i]);
  }
  out += "]";
  for (size_t q = 0; q < std::size(kQuantiles); ++q) {
    std::optional<double> v = stats::quantile(h, kQuantiles[q]);
    out += std::string(", \"") + kQuantileNames[q] + "\": " + (v ? number(*v) : "null");
  }
  return out + "}";
}

// The metric fields of one listener (`listener` set) or of all of them (`listener` empty).
std::string metricsJson(const stats::Registry& r, const std::string& listener) {
  stats::LabelMatch match;
  if (!listener.empty()) match.emplace_back("listener", listener);
  auto sum = [&](const stats::FamilySpec& f) { return std::to_string(r.sum(f.name, match)); };
  std::string out = "\"received\": " + sum(stats::kDownstreamReceived);
  out += ", \"refused\": " + sum(stats::kDownstreamRefused);
  out += ", \"responses\": {";
  for (size_t c = 0; c < std::size(kClasses); ++c) {
    stats::LabelMatch by_class = match;
    by_class.emplace_back("status_class", kClasses[c]);
    out += std::string(c ? ", " : "") + "\"" + kClasses[c] +
           "\": " + std::to_string(r.sum(stats::kDownstreamRequests.name, by_class));
  }
  out += "}, \"connections_active\": " + sum(stats::kDownstreamCxActive);
  out += ", \"connections_total\": " + sum(stats::kDownstreamCxTotal);
  stats::HistogramSnapshot h;
  if (!r.histogramSum(stats::kDownstreamDuration.name, listener.empty() ? "" : "listener", listener,
                      &h)) {
    h.bounds = stats::latencyBuckets();  // no listener yet: an empty histogram
    h.counts.assign(h.bounds.size() + 1, 0);
  }
  out += ", \"duration_seconds\": " + histogramJson(h);
  return out;
}

}  // namespace

std::string summaryJson(const SummaryFacts& f, const stats::Registry& registry) {
  const uint64_t now_s = f.now_ms / 1000;
  std::string out = "{\n  \"time_ms\": " + std::to_string(f.now_ms) + ",\n";
  out += "  \"started_at\": " + std::to_string(f.started_at) + ",\n";
  out +=
      "  \"uptime_s\": " + std::to_string(now_s > f.started_at ? now_s - f.started_at : 0) + ",\n";
  out += "  \"version\": " + quoted(f.version) + ",\n";
  out += "  \"workers\": " + std::to_string(f.workers) + ",\n";
  out += "  \"config_version\": " + std::to_string(f.config_version) + ",\n";
  out += "  \"reloads_ok\": " + std::to_string(f.reloads_ok) + ",\n";
  out += "  \"reloads_failed\": " + std::to_string(f.reloads_failed) + ",\n";
  out += "  \"last_reload\": ";
  out += f.last_reload_at == 0 ? std::string("null")
                               : "{\"at\": " + std::to_string(f.last_reload_at) +
                                     ", \"ok\": " + (f.last_reload_ok ? "true" : "false") + "}";
  out += ",\n  \"draining\": " + std::string(f.draining ? "true" : "false") + ",\n";
  out += "  \"listeners\": [";
  for (size_t i = 0; i < f.listeners.size(); ++i) {
    const SummaryListener& l = f.listeners[i];
    out += i ? ",\n    " : "\n    ";
    out += "{\"name\": " + quoted(l.name) + ", \"address\": " + quoted(l.address) +
           ", \"context_path\": " + quoted(l.context_path) +
           ", \"tls\": " + (l.tls ? "true" : "false") + ", " + metricsJson(registry, l.name) + "}";
  }
  out += f.listeners.empty() ? "],\n" : "\n  ],\n";
  out += "  \"total\": {" + metricsJson(registry, "") + "}\n}\n";
  return out;
}

}  // namespace sluice::server
