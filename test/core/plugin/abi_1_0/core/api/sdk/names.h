// Checks a discovery plugin needs on what it reads from a registry: cluster names and
// "host:port" endpoint addresses. Header-only, std only; the host applies the same rules to
// every published snapshot (core/server/discovery_sink.cc), so a plugin that checks first can
// skip one bad entry instead of having its whole snapshot refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::sdk {

// A cluster name: 1..200 of [A-Za-z0-9._-] (the same rule as cluster names in the YAML).
inline bool isClusterName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// "host:port" or "[v6]:port" (v6 may carry a %zone); host of [A-Za-z0-9._-], at most 253
// bytes; port 1..65535. Returns false and sets *error to a short reason ("missing port
// (expected host:port)", "missing host", "bad host 'h'", "bad IPv6 address 'a'",
// "expected [v6]:port", "bad port 'p' (expected 1..65535)").
inline bool checkHostPort(std::string_view address, std::string* error) {
  std::string_view host;
  std::string_view port;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      *error = "expected [v6]:port";
      return false;
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    for (char c : host) {
      bool ok = (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') ||
                c == ':' || c == '.' || c == '%';
      if (!ok) {
        *error = "bad IPv6 address '" + std::string(host) + "'";
        return false;
      }
    }
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) {
      *error = "missing port (expected host:port)";
      return false;
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    for (char c : host) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-' || c == '_';
      if (!ok) {
        *error = "bad host '" + std::string(host) + "'";
        return false;
      }
    }
  }
  if (host.empty() || host.size() > 253) {
    *error = host.empty() ? "missing host" : "host name too long";
    return false;
  }
  int64_t value = 0;
  for (char c : port) {
    if (c < '0' || c > '9' || value > 65535) {
      value = -1;
      break;
    }
    value = value * 10 + (c - '0');
  }
  if (port.empty() || value < 1 || value > 65535) {
    *error = "bad port '" + std::string(port) + "' (expected 1..65535)";
    return false;
  }
  return true;
}

}  // namespace sluice::sdk
