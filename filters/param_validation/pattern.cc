#include "filters/param_validation/pattern.h"

#include <vector>

namespace sluice::filters::pv {
namespace {

bool isQuantifierAt(const std::string& s, size_t i) {
  char c = s[i];
  return c == '*' || c == '+' || c == '?' || c == '{';
}

// The first reason the pattern's shape is refused, or "". Walks the source once, tracking groups
// (escapes and character classes skipped).
std::string shapeProblem(const std::string& s) {
  std::vector<bool> group_has_quantifier;  // one per open group
  bool in_class = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (!in_class && i + 1 < s.size() && s[i + 1] >= '1' && s[i + 1] <= '9') {
        return "back-references are not allowed";
      }
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      continue;
    }
    if (c == '[') {
      in_class = true;
      continue;
    }
    if (c == '(') {
      group_has_quantifier.push_back(false);
      continue;
    }
    if (c == ')') {
      if (group_has_quantifier.empty()) continue;  // the compiler reports it
      bool inner = group_has_quantifier.back();
      group_has_quantifier.pop_back();
      // '?' after a group is at most once: not a repetition.
      bool quantified = i + 1 < s.size() && isQuantifierAt(s, i + 1) && s[i + 1] != '?';
      if (inner && quantified) {
        return "a quantified group contains a quantifier (nested repetition can take "
               "exponential time)";
      }
      if ((inner || quantified) && !group_has_quantifier.empty()) {
        group_has_quantifier.back() = true;
      }
      continue;
    }
    if (isQuantifierAt(s, i) && !group_has_quantifier.empty()) {
      // "(?:" and "(?=" start groups; their '?' is not a quantifier.
      if (c == '?' && i > 0 && s[i - 1] == '(') continue;
      group_has_quantifier.back() = true;
    }
  }
  return "";
}

}  // namespace

std::optional<Pattern> Pattern::compile(const std::string& source, std::string* why) {
  if (source.size() > kMaxPatternLength) {
    *why = "pattern longer than " + std::to_string(kMaxPatternLength) + " characters";
    return std::nullopt;
  }
  std::string problem = shapeProblem(source);
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
