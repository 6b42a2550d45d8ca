// Checks of the names the registry hands us before they reach sluice: cluster names and
// "host:port" endpoint addresses. Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>

namespace sluice::zookeeper {

// A valid cluster name: 1..200 of [A-Za-z0-9._-] (what the core accepts).
bool isClusterName(std::string_view name);

// Checks "host:port": an IPv4 address or host name (letters, digits, '.', '-', '_') or "[v6]",
// then a port 1..65535. Nothing is resolved. On failure sets *error to a one-line reason.
bool checkHostPort(std::string_view address, std::string* error);

// "host:port", or "[host]:port" when `host` is an IPv6 address (contains ':').
std::string joinHostPort(std::string_view host, int port);

// Weights sluice accepts for an endpoint (as the main config's static endpoints).
constexpr int64_t kMaxWeight = 10000;

}  // namespace sluice::zookeeper
