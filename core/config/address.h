// Parsing of the "host:port" addresses used for listeners, the admin endpoint and cluster
// endpoints. Pure string checks: nothing is resolved here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::config {

// Splits `address` into host and port. Accepted forms: "1.2.3.4:80", "host.example:80" (letters,
// digits, '.', '-', '_') and "[::1]:80" (IPv6 must be in brackets). The port must be 1..65535.
// On success returns true and sets *host (without brackets) and *port; either may be nullptr.
// On failure returns false and sets *error (if not nullptr) to a one-line reason such as
// "missing port (expected host:port)" or "invalid port '0' (expected 1..65535)".
bool splitHostPort(std::string_view address, std::string* host, uint16_t* port, std::string* error);

}  // namespace sluice::config
