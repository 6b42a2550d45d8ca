// param_validation's regular expressions: RE2 syntax (filters/common/regex.h), searched
// (unanchored, RE2::PartialMatch, as JSON Schema's and OpenAPI's `pattern`: write ^...$ to match
// the whole value).
//
// RE2 matches in time linear in the value's length whatever the pattern, so no pattern shape is
// refused for speed; patterns RE2 does not accept (syntax errors, back-references, lookaround,
// too large) are refused at config load with RE2's message. A value is matched only when it is at
// most kMaxPatternInput bytes (a longer value is a violation before the regex runs; callers
// check). Thread-safe when const; copies share the compiled regex.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}  // namespace re2

namespace sluice::filters::pv {

constexpr size_t kMaxPatternInput = 1024;   // bytes
constexpr size_t kMaxPatternLength = 1000;  // characters of the pattern's source

class Pattern {
 public:
  // nullopt with `why` set when the pattern is too long or RE2 refuses it (see above).
  static std::optional<Pattern> compile(const std::string& source, std::string* why);
  // True when the regex matches somewhere in `value` (caller checks the length cap).
  bool matches(std::string_view value) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::shared_ptr<const re2::RE2> regex_;
};

}  // namespace sluice::filters::pv
