// param_validation's rules for a query parameter or a request header: parsed from YAML at config
// load (refused with the line on a bad regex, min > max, an unknown type, ...), then checked per
// value on the worker. Immutable once built; thread-safe when const.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/sdk/config.h"
#include "filters/param_validation/pattern.h"

namespace sluice::filters::pv {

// One violation, as listed in the 400 body: {"in": where, "name": name, "reason": reason}.
struct Violation {
  std::string in;  // "query", "header" or "body"
  std::string name;
  std::string reason;
};

// The rule for one query parameter or header. YAML (every key optional):
//   required: false          # absent → "is required"
//   type: string             # string | int | number | bool | enum
//   values: [a, b]           # enum only (and required for it): the allowed values, exact match
//   min: 1                   # int and number: smallest value allowed (inclusive)
//   max: 100                 # int and number: largest value allowed (inclusive)
//   min_length: 1            # bytes of the decoded value
//   max_length: 64           # bytes of the decoded value
//   pattern: '^[a-z]+$'      # RE2 syntax, searched (see pattern.h)
//   repeated: false          # may the parameter / header appear more than once?
// int: an optional '-' and decimal digits, within a signed 64-bit integer. number: a JSON
// number (-?digits[.digits][e[+-]digits]). bool: exactly "true" or "false".
struct ScalarRule {
  enum class Type { kString, kInt, kNumber, kBool, kEnum };

  // `node` is the rule's map; `what` names it in messages ("query parameter 'page'").
  ScalarRule(std::string name, const sdk::ConfigNode& node);

  // The reason `value` breaks the rule, or nullopt.
  std::optional<std::string> check(std::string_view value) const;
  std::optional<std::string> checkPattern(std::string_view value) const;

  std::string name;  // as configured (header names compare case-insensitively)
  bool required = false;
  bool repeated = false;
  Type type = Type::kString;
  std::vector<std::string> values;
  std::optional<double> min;
  std::optional<double> max;
  std::optional<int64_t> min_int;  // type int: the same bounds, exact
  std::optional<int64_t> max_int;
  std::optional<uint64_t> min_length;
  std::optional<uint64_t> max_length;
  std::optional<Pattern> pattern;
};

// Parses `text` as an int (see above); nullopt when it is not one.
std::optional<int64_t> parseInt(std::string_view text);
// Parses `text` as a JSON-grammar number; nullopt when it is not one.
std::optional<double> parseNumber(std::string_view text);
// "1", "2.5", "-0.001" — a number as a message shows it (shortest form that reads back).
std::string formatNumber(double v);

// Helpers shared with the body rules.
std::optional<double> readBound(const sdk::ConfigNode& node, const char* key, bool integer);
std::optional<uint64_t> readLength(const sdk::ConfigNode& node, const char* key);
// Refuses min > max and min_length > max_length, pointing at the max.
void checkOrder(const sdk::ConfigNode& node, const std::optional<double>& min,
                const std::optional<double>& max, const std::optional<uint64_t>& min_length,
                const std::optional<uint64_t>& max_length);

}  // namespace sluice::filters::pv
