// Shapes of ECMAScript patterns that std::regex (a backtracking matcher) can take exponential
// time on, refused by the filters that match operator-written patterns against request data
// (param_validation's `pattern`, cors's `allow_origin_regex`): a quantified group that itself
// contains a quantifier ("(a+)+", "(x*y?)*", "([a-z]+\.)+") and back-references ("\1").
//
// A heuristic, not a proof: overlapping alternatives under one quantifier ("(a|aa)*") are not
// caught, so callers also cap the length of what they match.
#pragma once

#include <string>

namespace sluice::filters {

// The first reason `pattern` is refused ("" when it is not): walks the source once, tracking
// groups (escapes and character classes skipped).
std::string regexShapeProblem(const std::string& pattern);

}  // namespace sluice::filters
