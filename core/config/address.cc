#include "core/config/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "core/config/reader.h"

namespace sluice::config {
namespace {

using internal::cat;

bool isDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool isHostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

// Checks a host that is not in brackets: an IPv4 literal or a DNS-style name.
bool checkHost(std::string_view host, std::string* reason) {
  if (host.empty()) {
    *reason = "missing host (expected host:port)";
    return false;
  }
  if (host.find(':') != std::string_view::npos) {
    *reason = "IPv6 addresses must be written in brackets, e.g. [::1]:8080";
    return false;
  }
  bool numeric = true;
  for (char c : host) {
    if (!isHostChar(c)) {
      *reason = cat("invalid character '", std::string_view(&c, 1), "' in host '", host, "'");
      return false;
    }
    if (c != '.' && (c < '0' || c > '9')) numeric = false;
  }
  if (numeric) {
    in_addr v4{};
    if (inet_pton(AF_INET, std::string(host).c_str(), &v4) != 1) {
      *reason = cat("invalid IPv4 address '", host, "'");
      return false;
    }
    return true;
  }
  if (host.size() > 253 || host.front() == '.' || host.front() == '-' ||
      host.find("..") != std::string_view::npos) {
    *reason = cat("invalid host name '", host, "'");
    return false;
  }
  return true;
}

bool checkPort(std::string_view text, uint16_t* port, std::string* reason) {
  if (text.empty()) {
    *reason = "missing port (expected host:port)";
    return false;
  }
  uint32_t value = 0;
  bool ok = isDigits(text) && text.size() <= 5;
  if (ok) {
    for (char c : text) value = value * 10 + static_cast<uint32_t>(c - '0');
    ok = value >= 1 && value <= 65535;
  }
  if (!ok) {
    *reason = cat("invalid port '", text, "' (expected 1..65535)");
    return false;
  }
  *port = static_cast<uint16_t>(value);
  return true;
}

}  // namespace

bool splitHostPort(std::string_view address, std::string* host, uint16_t* port,
                   std::string* error) {
  std::string reason;
  std::string_view host_part;
  std::string_view port_part;
  uint16_t port_value = 0;
  bool ok = true;
  if (address.empty()) {
    reason = "empty address (expected host:port)";
    ok = false;
  } else if (address.front() == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos) {
      reason = "missing ']' after IPv6 address";
      ok = false;
    } else {
      host_part = address.substr(1, close - 1);
      in6_addr v6{};
      if (inet_pton(AF_INET6, std::string(host_part).c_str(), &v6) != 1) {
        reason = cat("invalid IPv6 address '", host_part, "'");
        ok = false;
      } else if (close + 1 >= address.size() || address[close + 1] != ':') {
        reason = "missing port (expected [ipv6]:port)";
        ok = false;
      } else {
        port_part = address.substr(close + 2);
      }
    }
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) {
      reason = "missing port (expected host:port)";
      ok = false;
    } else {
      host_part = address.substr(0, colon);
      port_part = address.substr(colon + 1);
      ok = checkHost(host_part, &reason);
    }
  }
  if (ok) ok = checkPort(port_part, &port_value, &reason);
  if (!ok) {
    if (error != nullptr) *error = std::move(reason);
    return false;
  }
  if (host != nullptr) *host = std::string(host_part);
  if (port != nullptr) *port = port_value;
  return true;
}

}  // namespace sluice::config
