#include "core/stats/text_format.h"

#include <cmath>
#include <cstdio>

namespace sluice::stats {
namespace {

bool nameChar(char c, bool first, bool colon) {
  bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

bool isName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!nameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

}  // namespace

const char* kindName(Kind kind) {
  switch (kind) {
    case Kind::kCounter:
      return "counter";
    case Kind::kGauge:
      return "gauge";
    case Kind::kHistogram:
      return "histogram";
  }
  return "untyped";
}

bool isMetricName(std::string_view name) { return isName(name, true); }

bool isLabelName(std::string_view name) { return isName(name, false) && name.substr(0, 2) != "__"; }

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", value);
  return buf;
}

void appendHeader(std::string* out, std::string_view name, std::string_view help, Kind kind) {
  out->append("# HELP ").append(name).append(" ").append(escapeHelp(help)).append("\n");
  out->append("# TYPE ").append(name).append(" ").append(kindName(kind)).append("\n");
}

void appendSample(std::string* out, std::string_view name, const Labels& labels,
                  std::string_view value) {
  out->append(name);
  if (!labels.empty()) {
    out->append("{");
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i != 0) out->append(",");
      out->append(labels[i].first).append("=\"").append(escapeLabelValue(labels[i].second));
      out->append("\"");
    }
    out->append("}");
  }
  out->append(" ").append(value).append("\n");
}

}  // namespace sluice::stats
