#include "filters/common/regex.h"

namespace sluice::filters {
namespace {

constexpr const char* kSyntaxLink = "https://github.com/google/re2/wiki/Syntax";

// What the operator probably meant, for the constructs of other engines RE2 lacks.
std::string hintFor(const re2::RE2& re) {
  const std::string& arg = re.error_arg();
  if (re.error_code() == re2::RE2::ErrorBadEscape && arg.size() == 2 && arg[0] == '\\' &&
      arg[1] >= '1' && arg[1] <= '9') {
    return "back-references are not supported";
  }
  if (re.error_code() == re2::RE2::ErrorBadPerlOp) {
    if (arg.rfind("(?=", 0) == 0 || arg.rfind("(?!", 0) == 0 || arg.rfind("(?<=", 0) == 0 ||
        arg.rfind("(?<!", 0) == 0 || arg == "(?<") {
      return "lookaround is not supported (a named group is written (?P<name>...))";
    }
  }
  return "";
}

}  // namespace

std::shared_ptr<const re2::RE2> compileRegex(const std::string& pattern, std::string* why) {
  re2::RE2::Options options;
  options.set_log_errors(false);  // the error goes to the operator with file:line instead
  options.set_max_mem(kRegexMaxMem);
  auto re = std::make_shared<const re2::RE2>(pattern, options);
  if (!re->ok()) {
    std::string hint = hintFor(*re);
    *why = "invalid regular expression '" + pattern + "': " + re->error() +
           (hint.empty() ? "" : "; " + hint) + " (RE2 syntax: " + kSyntaxLink + ")";
    return nullptr;
  }
  return re;
}

}  // namespace sluice::filters
