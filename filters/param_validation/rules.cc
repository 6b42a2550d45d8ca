#include "filters/param_validation/rules.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sluice::filters::pv {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string joinValues(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

}  // namespace

std::optional<int64_t> parseInt(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 19) return std::nullopt;
  for (char c : digits) {
    if (!isDigit(c)) return std::nullopt;
  }
  std::string s(text);
  errno = 0;
  long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parseNumber(std::string_view text) {
  // JSON number grammar (RFC 8259 §6), then strtod for the value.
  size_t i = 0, n = text.size();
  if (i < n && text[i] == '-') ++i;
  size_t int_start = i;
  while (i < n && isDigit(text[i])) ++i;
  if (i == int_start || i - int_start > 400) return std::nullopt;
  if (i < n && text[i] == '.') {
    size_t frac = ++i;
    while (i < n && isDigit(text[i])) ++i;
    if (i == frac) return std::nullopt;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exp = i;
    while (i < n && isDigit(text[i])) ++i;
    if (i == exp) return std::nullopt;
  }
  if (i != n || n > 512) return std::nullopt;
  std::string s(text);
  double v = std::strtod(s.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string formatNumber(double v) {
  char buf[64];
  if (std::floor(v) == v && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::optional<double> readBound(const sdk::ConfigNode& node, const char* key, bool integer) {
  sdk::ConfigNode n = node[key];
  if (n.isNull()) return std::nullopt;
  if (integer) {
    std::optional<int64_t> v = n.isScalar() ? parseInt(n.scalar()) : std::nullopt;
    if (!v) n.fail(std::string(key) + " must be an integer");
    return static_cast<double>(*v);
  }
  std::optional<double> v = n.isScalar() ? parseNumber(n.scalar()) : std::nullopt;
  if (!v) n.fail(std::string(key) + " must be a number");
  return v;
}

std::optional<uint64_t> readLength(const sdk::ConfigNode& node, const char* key) {
  sdk::ConfigNode n = node[key];
  if (n.isNull()) return std::nullopt;
  return static_cast<uint64_t>(n.asInt(0, int64_t{1} << 40));
}

void checkOrder(const sdk::ConfigNode& node, const std::optional<double>& min,
                const std::optional<double>& max, const std::optional<uint64_t>& min_length,
                const std::optional<uint64_t>& max_length) {
  if (min && max && *min > *max) {
    node["max"].fail("max " + formatNumber(*max) + " is less than min " + formatNumber(*min));
  }
  if (min_length && max_length && *min_length > *max_length) {
    node["max_length"].fail("max_length " + std::to_string(*max_length) +
                            " is less than min_length " + std::to_string(*min_length));
  }
}

ScalarRule::ScalarRule(std::string rule_name, const sdk::ConfigNode& node)
    : name(std::move(rule_name)) {
  node.requireOnlyKeys({"required", "type", "values", "min", "max", "min_length", "max_length",
                        "pattern", "repeated"});
  required = node.getBool("required", false);
  repeated = node.getBool("repeated", false);
  std::string t = node.getString("type", "string");
  if (t == "string") {
    type = Type::kString;
  } else if (t == "int" || t == "integer") {
    type = Type::kInt;
  } else if (t == "number") {
    type = Type::kNumber;
  } else if (t == "bool" || t == "boolean") {
    type = Type::kBool;
  } else if (t == "enum") {
    type = Type::kEnum;
  } else {
    node["type"].fail("unknown type '" + t + "' (expected string, int, number, bool or enum)");
  }
  if (node.has("values")) {
    if (type != Type::kEnum) node["values"].fail("values applies to type enum only");
    values = node["values"].asStringList();
  }
  if (type == Type::kEnum && values.empty()) {
    node.fail("type enum needs a non-empty values list");
  }
  bool numeric = type == Type::kInt || type == Type::kNumber;
  for (const char* key : {"min", "max"}) {
    if (node.has(key) && !numeric) {
      node[key].fail(std::string(key) +
                     " applies to types int and number (for lengths use min_length/max_length)");
    }
  }
  min = readBound(node, "min", type == Type::kInt);
  max = readBound(node, "max", type == Type::kInt);
  if (type == Type::kInt) {
    // Exact 64-bit bounds for ints (a double would round values above 2^53).
    if (min) min_int = *parseInt(node["min"].scalar());
    if (max) max_int = *parseInt(node["max"].scalar());
  }
  min_length = readLength(node, "min_length");
  max_length = readLength(node, "max_length");
  checkOrder(node, min, max, min_length, max_length);
  if (node.has("pattern")) {
    std::string why;
    pattern = Pattern::compile(node["pattern"].asString(), &why);
    if (!pattern) node["pattern"].fail(why);
  }
}

std::optional<std::string> ScalarRule::check(std::string_view value) const {
  if (max_length && value.size() > *max_length) {
    return "must be at most " + std::to_string(*max_length) + " bytes long";
  }
  if (min_length && value.size() < *min_length) {
    return "must be at least " + std::to_string(*min_length) + " bytes long";
  }
  double number = 0;
  switch (type) {
    case Type::kString:
      break;
    case Type::kInt: {
      std::optional<int64_t> v = parseInt(value);
      if (!v) return std::string("must be an integer");
      if (min_int && *v < *min_int) return "must be at least " + std::to_string(*min_int);
      if (max_int && *v > *max_int) return "must be at most " + std::to_string(*max_int);
      return checkPattern(value);
    }
    case Type::kNumber: {
      std::optional<double> v = parseNumber(value);
      if (!v) return std::string("must be a number");
      number = *v;
      break;
    }
    case Type::kBool:
      if (value != "true" && value != "false") return std::string("must be true or false");
      break;
    case Type::kEnum: {
      bool found = false;
      for (const std::string& v : values) found = found || v == value;
      if (!found) return "must be one of: " + joinValues(values);
      break;
    }
  }
  if (min && number < *min) return "must be at least " + formatNumber(*min);
  if (max && number > *max) return "must be at most " + formatNumber(*max);
  return checkPattern(value);
}

std::optional<std::string> ScalarRule::checkPattern(std::string_view value) const {
  if (pattern) {
    if (value.size() > kMaxPatternInput) {
      return "must be at most " + std::to_string(kMaxPatternInput) + " bytes long";
    }
    if (!pattern->matches(value)) return "must match the pattern " + pattern->source();
  }
  return std::nullopt;
}

}  // namespace sluice::filters::pv
