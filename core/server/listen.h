// Listening sockets. Main thread.
#pragma once

#include <string>

namespace sluice::server {

// A non-blocking TCP socket bound to `address` ("ip:port", "[v6]:port") with SO_REUSEADDR and
// SO_REUSEPORT (so every worker can own one on the same port and the kernel spreads
// connections), listening with `backlog`. Returns the fd, or -1 with *error set.
int listenOn(const std::string& address, int backlog, std::string* error);

}  // namespace sluice::server
