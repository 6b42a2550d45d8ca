// Operator-written regular expressions matched against request data (cors's allow_origin_regex,
// param_validation's pattern), compiled with RE2 (https://github.com/google/re2): an automaton,
// not a backtracking matcher, so matching takes time linear in the length of the value whatever
// the pattern ("(a|aa)*b", "([a-z0-9]+)+\.example\.com" included) — a crafted value cannot stall
// a worker.
//
// Syntax: RE2's (https://github.com/google/re2/wiki/Syntax), close to Perl/ECMAScript for the
// usual constructs (classes, \d \w \s \b, {n,m}, (?:...), (?i)); it has no back-references
// ("\1") and no lookaround ("(?=", "(?!", "(?<="): such patterns are refused with a message saying
// so. Patterns and values are UTF-8: "." and classes match whole characters, and a byte that is
// not part of valid UTF-8 matches nothing.
//
// Memory: each pattern gets RE2's budget kRegexMaxMem (compiled program plus its lazily built
// DFA cache, which is flushed when full; a simple pattern uses a few KB). A pattern whose program
// does not fit is refused at load ("pattern too large"). Thread-safe: a compiled RE2 is matched
// from every worker at once (RE2's const methods are thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <re2/re2.h>

namespace sluice::filters {

// 8 MiB, RE2's default: a 64-letter Unicode class ("\p{L}{1,64}") needs about 2 MiB, so a smaller
// budget would refuse patterns operators write.
constexpr int64_t kRegexMaxMem = int64_t{8} << 20;  // bytes

// Compiles `pattern`; nullptr with `why` set when RE2 refuses it:
//   "invalid regular expression '<pattern>': <RE2's message>[; <hint>] (RE2 syntax: <link>)"
// The hint names back-references and lookaround when the pattern uses them.
std::shared_ptr<const re2::RE2> compileRegex(const std::string& pattern, std::string* why);

}  // namespace sluice::filters
