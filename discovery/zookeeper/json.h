// JSON node data read with yaml-cpp (JSON is YAML): helpers shared by the formats and the
// self-registration. Pure functions, any thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sluice::zookeeper {

// Parses `text` as a JSON object. Empty or blank text and `null` give an empty map. False with
// *error set on a syntax error or when the value is not an object. Never throws.
bool parseJsonObject(const std::string& text, YAML::Node* out, std::string* error);

// An integer scalar in [min, max] (JSON numbers and numeric strings). False when absent, not
// a scalar, or out of range.
bool readInt(const YAML::Node& node, int64_t min, int64_t max, int64_t* out);

// A map of scalars as (key, value) pairs; false (with *error) on nested values.
bool readStringMap(const YAML::Node& node, std::vector<std::pair<std::string, std::string>>* out,
                   std::string* error);

// `s` as a JSON string literal, quotes included (for the data sluice writes).
std::string jsonQuote(const std::string& s);

}  // namespace sluice::zookeeper
