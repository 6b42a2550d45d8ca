// Name and address checks of the endpoints file (declared in endpoints_file.h).
#include <string>
#include <string_view>

#include "discovery/file/endpoints_file.h"

namespace sluice::discovery {
namespace {

bool isHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

bool isV6Char(char c) {
  return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
         c == '.';
}

}  // namespace

bool isClusterName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    if (!isHostChar(c)) return false;
  }
  return true;
}

bool checkAddress(std::string_view address, std::string* error) {
  std::string_view host;
  std::string_view port;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      *error = "expected [ipv6]:port";
      return false;
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    for (char c : host) {
      if (!isV6Char(c)) {
        *error = "bad IPv6 address";
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
        *error = "bad host (letters, digits, '.', '-', '_'; IPv6 goes in brackets)";
        return false;
      }
    }
  }
  if (host.empty()) {
    *error = "missing host";
    return false;
  }
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) digits = digits && c >= '0' && c <= '9';
  int value = digits ? std::stoi(std::string(port)) : 0;
  if (value < 1 || value > 65535) {
    *error = "invalid port '" + std::string(port) + "' (expected 1..65535)";
    return false;
  }
  return true;
}

}  // namespace sluice::discovery
