#include "filters/common/regex_shape.h"

#include <vector>

namespace sluice::filters {
namespace {

bool isQuantifierAt(const std::string& s, size_t i) {
  char c = s[i];
  return c == '*' || c == '+' || c == '?' || c == '{';
}

}  // namespace

std::string regexShapeProblem(const std::string& s) {
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

}  // namespace sluice::filters
