#include "filters/param_validation/pattern.h"

#include <re2/re2.h>

#include "filters/common/regex.h"

namespace sluice::filters::pv {

std::optional<Pattern> Pattern::compile(const std::string& source, std::string* why) {
  if (source.size() > kMaxPatternLength) {
    *why = "pattern longer than " + std::to_string(kMaxPatternLength) + " characters";
    return std::nullopt;
  }
  Pattern p;
  p.source_ = source;
  p.regex_ = compileRegex(source, why);
  if (!p.regex_) return std::nullopt;
  return p;
}

bool Pattern::matches(std::string_view value) const {
  return re2::RE2::PartialMatch(re2::StringPiece(value.data(), value.size()), *regex_);
}

}  // namespace sluice::filters::pv
