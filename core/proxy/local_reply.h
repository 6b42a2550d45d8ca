// Responses the gateway itself generates (errors, filter replies): a short JSON body so clients
// and operators see why, e.g. {"status":503,"error":"Service Unavailable","detail":"..."}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::proxy {

// The JSON body for a gateway-generated error.
std::string errorBody(uint32_t status, std::string_view detail);
// `s` escaped for a JSON string (quotes not included).
std::string jsonEscape(std::string_view s);

}  // namespace sluice::proxy
