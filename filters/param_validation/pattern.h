// param_validation's regular expressions: ECMAScript (std::regex), searched (unanchored, as
// JSON Schema's and OpenAPI's `pattern`: write ^...$ to match the whole value).
//
// std::regex backtracks, so a pattern can take exponential time on a crafted value. Two guards:
// patterns with a quantified group that itself contains a quantifier ("(a+)+", "(x*y?)*") or with
// a back-reference are refused at config load, and a value is matched only when it is at most
// kMaxPatternInput bytes (a longer value is a violation before the regex runs). Thread-safe when
// const (std::regex matching on a const regex is).
#pragma once

#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace sluice::filters::pv {

constexpr size_t kMaxPatternInput = 1024;  // bytes
constexpr size_t kMaxPatternLength = 1000;

class Pattern {
 public:
  // nullopt with `why` set when the pattern does not compile or is refused (see above).
  static std::optional<Pattern> compile(const std::string& source, std::string* why);
  // The regex is searched in `value` (caller checks the length cap). A match the library gives
  // up on (std::regex_error, e.g. error_complexity or error_stack) counts as no match.
  bool matches(std::string_view value) const {
    try {
      return std::regex_search(value.begin(), value.end(), regex_);
    } catch (const std::regex_error&) {
      return false;
    }
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::regex regex_;
};

}  // namespace sluice::filters::pv
