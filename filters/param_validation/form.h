// param_validation's query-string parser: the URL standard's application/x-www-form-urlencoded
// parser (https://url.spec.whatwg.org/#urlencoded-parsing), byte for byte.
//
//  - the query is the part of the request target after the first '?', up to a '#';
//  - it is split on '&'; empty pieces are skipped;
//  - a piece's name is what precedes its first '=', its value what follows (no '=': the whole
//    piece is the name and the value is empty);
//  - in both, '+' becomes a space, then percent-decoding runs: "%XX" with two hex digits becomes
//    that byte; a '%' not followed by two hex digits stays as it is (the standard's leniency).
// Bytes are kept as bytes (no UTF-8 decoding: rules compare and count bytes). Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::filters::pv {

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// The query component of an origin-form (or absolute-form) request target; "" when none.
std::string_view queryOf(std::string_view target);
// Percent-decodes `s` after '+' → ' ' (see above).
std::string formDecode(std::string_view s);
// All name/value pairs, in order, repeats kept.
QueryParams parseQuery(std::string_view query);

}  // namespace sluice::filters::pv
