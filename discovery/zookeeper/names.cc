#include "discovery/zookeeper/names.h"

#include <cstdint>

namespace sluice::zookeeper {
namespace {

bool isHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

bool isV6Char(char c) {
  return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
         c == '.' || c == '%';
}

}  // namespace

bool isClusterName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    if (!isHostChar(c)) return false;
  }
  return true;
}

bool checkHostPort(std::string_view address, std::string* error) {
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
      if (!isV6Char(c)) {
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
      if (!isHostChar(c)) {
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

std::string joinHostPort(std::string_view host, int port) {
  std::string out =
      host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
  return out + ":" + std::to_string(port);
}

}  // namespace sluice::zookeeper
