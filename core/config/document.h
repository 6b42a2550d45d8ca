// Internal: text → one YAML document, working around yaml-cpp 0.7 parser bugs.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "core/config/reader.h"

namespace sluice::config::internal {

// Parses `text` as a single YAML document. Records in ctx: syntax errors (with their
// position), a stray ',' that yaml-cpp 0.7 silently reads as an empty document, and a second
// non-empty document ("only one YAML document is allowed"). Returns the first document (Null
// when the text is empty or on a syntax error). Never loops forever on the inputs that make
// YAML::LoadAll in yaml-cpp 0.7 do so (jbeder/yaml-cpp#1040).
YAML::Node loadDocument(const std::string& text, Context& ctx);

}  // namespace sluice::config::internal
