// Escaping of untrusted values (paths, header values, addresses) for access log lines. Both
// functions append to `out` and never allocate beyond its growth. Any thread.
#pragma once

#include <string>
#include <string_view>

namespace sluice::accesslog {

// Appends `value` as a JSON string literal, quotes included (RFC 8259): `"` and `\` escaped,
// control bytes (< 0x20) and DEL as \n, \r, \t or \u00XX, valid UTF-8 copied as is, and every
// byte that is not part of a valid UTF-8 sequence (overlong forms, surrogates, stray
// continuation bytes, truncated sequences) replaced by \ufffd, so the line is always valid JSON.
// Appends `value` as a JSON string literal (RFC 8259 §7), quotes included: `"` and `\`
// escaped, control bytes and DEL as \uXXXX, invalid UTF-8 replaced by \ufffd (so a hostile
// path never breaks the line or the JSON).
void appendJsonString(std::string_view value, std::string* out);
// The same without the surrounding quotes (for callers that append them with a key).
void appendJsonEscaped(std::string_view value, std::string* out);

// Appends `value` for a text (format string) line: control bytes, DEL, `"` and `\` become
// \xHH (as nginx writes them), so a value can neither break the line nor fake a field
// delimiter; other bytes (UTF-8 included) are copied. An empty value is written as "-".
// Appends `value` for a format-string line: "-" when empty; `"`, `\`, control bytes and DEL
// as \xHH (a value can never end the line or a quoted field early).
void appendTextValue(std::string_view value, std::string* out);

}  // namespace sluice::accesslog
