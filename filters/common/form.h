// application/x-www-form-urlencoded decoding, shared by the filters that read query strings
// (api_key_auth and jwt_auth through auth_common, param_validation).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sluice::filters::common {

// What a '%' not followed by two hex digits means.
enum class BadEscape {
  kKeep,    // copied as it is (the WHATWG URL standard's percent-decode, §1.3)
  kRefuse,  // the whole value is malformed (credentials: never guess)
};

// Decodes one name or value of a query string (WHATWG URL standard §5.1,
// application/x-www-form-urlencoded parsing): '+' is a space, %XX is the byte XX (either case).
// nullopt only with BadEscape::kRefuse and a bad escape.
std::optional<std::string> formDecode(std::string_view in, BadEscape bad);

}  // namespace sluice::filters::common
