#include "filters/param_validation/pattern.h"

#include "filters/common/regex_shape.h"

namespace sluice::filters::pv {

std::optional<Pattern> Pattern::compile(const std::string& source, std::string* why) {
  if (source.size() > kMaxPatternLength) {
    *why = "pattern longer than " + std::to_string(kMaxPatternLength) + " characters";
    return std::nullopt;
  }
  std::string problem = regexShapeProblem(source);
  if (!problem.empty()) {
    *why = "pattern '" + source + "' refused: " + problem;
    return std::nullopt;
  }
  Pattern p;
  p.source_ = source;
  try {
    p.regex_ = std::regex(source, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    *why = "invalid regular expression '" + source + "': " + e.what();
    return std::nullopt;
  }
  return p;
}

}  // namespace sluice::filters::pv
