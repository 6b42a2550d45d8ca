// A cluster's `health_check`, `outlier_detection`, `panic_threshold_percent` and `slow_start_ms`.
#include <string>

#include "core/config/parse.h"

namespace sluice::config::internal {
namespace {

constexpr uint32_t kMaxThreshold = 100;

// "200-399" or "204" (or the integer 204) into an inclusive range of HTTP statuses.
bool parseStatusRange(const Field& f, Context& ctx, std::pair<uint32_t, uint32_t>* out) {
  uint64_t single = 0;
  if (parseDecimal(f.value, &single)) {
    if (single < 100 || single > 599) {
      ctx.error(f.mark, cat(f.label, ": status ", single, " is outside 100-599"));
      return false;
    }
    *out = {static_cast<uint32_t>(single), static_cast<uint32_t>(single)};
    return true;
  }
  std::string text;
  if (!readString(f, ctx, &text)) return false;
  size_t dash = text.find('-');
  auto number = [](const std::string& s, uint32_t* v) {
    if (s.empty() || s.size() > 3) return false;
    uint32_t n = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + static_cast<uint32_t>(c - '0');
    }
    *v = n;
    return true;
  };
  uint32_t low = 0;
  uint32_t high = 0;
  bool ok = dash == std::string::npos
                ? number(text, &low) && number(text, &high)
                : number(text.substr(0, dash), &low) && number(text.substr(dash + 1), &high);
  if (!ok || low < 100 || high > 599 || low > high) {
    ctx.error(f.mark, cat(f.label,
                          ": expected a status (200) or a range (200-399) within "
                          "100-599, got ",
                          describe(f.value)));
    return false;
  }
  *out = {low, high};
  return true;
}

void parseHealthCheck(const Field& field, Context& ctx, HealthCheck* out) {
  out->enabled = true;
  out->mark = field.mark;
  forEachField(
      field, "health_check",
      {"type", "path", "port", "host", "expected_statuses", "interval_ms", "interval_jitter_ms",
       "timeout_ms", "healthy_threshold", "unhealthy_threshold"},
      ctx, [&](const Field& f) {
        if (f.key == "type") {
          std::string type;
          if (!readString(f, ctx, &type)) return;
          if (type == "http") {
            out->type = HealthCheck::Type::kHttp;
          } else if (type == "tcp") {
            out->type = HealthCheck::Type::kTcp;
          } else {
            ctx.error(f.mark, cat(f.label, ": expected http or tcp, got ", describe(f.value)));
          }
        } else if (f.key == "path") {
          std::string path;
          if (!readString(f, ctx, &path)) return;
          if (path.empty() || path[0] != '/' ||
              path.find_first_of(" \r\n\t") != std::string::npos) {
            ctx.error(f.mark, cat(f.label,
                                  ": expected a path starting with '/' and without "
                                  "spaces, got ",
                                  describe(f.value)));
            return;
          }
          out->path = path;
        } else if (f.key == "port") {
          readUint32(f, 1, 65535, ctx, &out->port);
        } else if (f.key == "host") {
          std::string host;
          if (!readString(f, ctx, &host)) return;
          if (host.empty() || host.find_first_of(" \r\n\t") != std::string::npos) {
            ctx.error(f.mark, cat(f.label, ": expected a host name, got ", describe(f.value)));
            return;
          }
          out->host = host;
        } else if (f.key == "expected_statuses") {
          std::vector<std::pair<uint32_t, uint32_t>> ranges;
          forEachItem(f, ctx, [&](const Field& item) {
            std::pair<uint32_t, uint32_t> r;
            if (parseStatusRange(item, ctx, &r)) ranges.push_back(r);
          });
          if (f.value.IsSequence() && f.value.size() == 0) {
            ctx.error(f.mark, cat(f.label, ": empty list (leave it out for 200-299)"));
          }
          if (!ranges.empty()) out->expected_statuses = ranges;
        } else if (f.key == "interval_ms") {
          readTimeoutMs(f, ctx, &out->interval_ms);
        } else if (f.key == "interval_jitter_ms") {
          readUint32(f, 0, 3600000, ctx, &out->interval_jitter_ms);
        } else if (f.key == "timeout_ms") {
          readTimeoutMs(f, ctx, &out->timeout_ms);
        } else if (f.key == "healthy_threshold") {
          readUint32(f, 1, kMaxThreshold, ctx, &out->healthy_threshold);
        } else if (f.key == "unhealthy_threshold") {
          readUint32(f, 1, kMaxThreshold, ctx, &out->unhealthy_threshold);
        }
      });
}

void parseOutlierDetection(const Field& field, Context& ctx, OutlierDetection* out) {
  out->enabled = true;
  out->mark = field.mark;
  forEachField(field, "outlier_detection",
               {"consecutive_5xx", "consecutive_gateway_failure", "base_ejection_time_ms",
                "max_ejection_time_ms", "max_ejection_percent"},
               ctx, [&](const Field& f) {
                 if (f.key == "consecutive_5xx") {
                   readUint32(f, 0, 100000, ctx, &out->consecutive_5xx);
                 } else if (f.key == "consecutive_gateway_failure") {
                   readUint32(f, 0, 100000, ctx, &out->consecutive_gateway_failure);
                 } else if (f.key == "base_ejection_time_ms") {
                   readTimeoutMs(f, ctx, &out->base_ejection_time_ms);
                 } else if (f.key == "max_ejection_time_ms") {
                   readTimeoutMs(f, ctx, &out->max_ejection_time_ms);
                 } else if (f.key == "max_ejection_percent") {
                   readUint32(f, 0, 100, ctx, &out->max_ejection_percent);
                 }
               });
  if (out->max_ejection_time_ms < out->base_ejection_time_ms) {
    ctx.error(field.mark,
              cat(field.label, ": max_ejection_time_ms (", out->max_ejection_time_ms,
                  ") is below base_ejection_time_ms (", out->base_ejection_time_ms, ")"));
  }
}

}  // namespace

bool parseHealthSetting(const Field& f, Context& ctx, Cluster* out) {
  if (f.key == "health_check") {
    parseHealthCheck(f, ctx, &out->health_check);
  } else if (f.key == "outlier_detection") {
    parseOutlierDetection(f, ctx, &out->outlier_detection);
  } else if (f.key == "panic_threshold_percent") {
    readUint32(f, 0, 100, ctx, &out->panic_threshold_percent);
  } else if (f.key == "slow_start_ms") {
    readUint32(f, 0, 3600000, ctx, &out->slow_start_ms);
  } else {
    return false;
  }
  return true;
}

const std::vector<std::string_view>& healthSettingKeys() {
  static const std::vector<std::string_view> keys = {"health_check", "outlier_detection",
                                                     "panic_threshold_percent", "slow_start_ms"};
  return keys;
}

}  // namespace sluice::config::internal
