// param_validation's JSON body rules: parsed from YAML at config load, checked on the whole body
// (read with Stream::bufferBody) on the worker. Immutable once built; thread-safe when const.
//
// YAML (under the filter's `body:`):
//   max_bytes: 1048576        # larger bodies are refused by the host with 413 (1..1 GiB)
//   max_depth: 32             # deepest nesting of objects/arrays accepted (1..1000)
//   methods: [POST, PUT, PATCH]   # requests whose body rules apply (others: bodies not checked)
//   required: [name, address.city]   # fields that must be present
//   fields:
//     name: {type: string, min_length: 1, max_length: 100, pattern: '^[A-Za-z ]+$'}
//     age: {type: integer, min: 0, max: 150}
//     role: {type: string, enum: [admin, user]}
//     address.city: {type: string, required: true}   # dots separate nested object keys
//     tags: {type: array, max_length: 20}            # for arrays: number of items
// Types (JSON Schema's names): string, integer (a number with no fractional part: 3 and 3.0),
// number, boolean, object, array, null; no type: any. min/max: integer and number; min_length/
// max_length: string (Unicode code points, as JSON Schema counts) and array (items); enum: string,
// integer and number; pattern: string (see pattern.h).
//
// The body must be one JSON value (RFC 8259, UTF-8; nlohmann-json's strict parser) whose top level
// is an object when any field rule exists; an object with the same key twice is refused (parsers
// disagree on which one wins, so a validated value could differ from what the backend reads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/sdk/config.h"
#include "filters/param_validation/pattern.h"
#include "filters/param_validation/rules.h"

namespace sluice::filters::pv {

struct FieldRule {
  enum class Type { kAny, kString, kInteger, kNumber, kBoolean, kObject, kArray, kNull };

  // `node` is the rule's map, or (has_rule false) the `required` entry naming the field.
  FieldRule(std::string name, const sdk::ConfigNode& node, bool has_rule);

  std::string name;               // "address.city"
  std::vector<std::string> path;  // {"address", "city"}
  bool required = false;
  Type type = Type::kAny;
  std::optional<double> min;
  std::optional<double> max;
  std::optional<uint64_t> min_length;
  std::optional<uint64_t> max_length;
  std::vector<std::string> enum_strings;
  std::vector<double> enum_numbers;
  std::optional<Pattern> pattern;
};

struct BodyRules {
  explicit BodyRules(const sdk::ConfigNode& node);

  // True when a request with this method gets its body checked.
  bool appliesTo(std::string_view method) const;
  // Appends every violation of `body` (the whole request body) to `out`.
  void validate(std::string_view body, std::vector<Violation>* out) const;

  uint64_t max_bytes = 1 << 20;
  uint32_t max_depth = 32;
  std::vector<std::string> methods{"POST", "PUT", "PATCH"};
  std::vector<FieldRule> fields;  // config order; fields named only in `required` at the end
};

// True for application/json and application/<anything>+json (RFC 6839 §3.1), parameters
// ignored, case-insensitive.
bool isJsonMediaType(std::string_view content_type);

}  // namespace sluice::filters::pv
