#include "filters/ip_filter/cidr.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace sluice::filters::ip {
namespace {

Address fromBytes(const unsigned char* b) {
  Address a;
  for (int i = 0; i < 8; ++i) a.hi = (a.hi << 8) | b[i];
  for (int i = 8; i < 16; ++i) a.lo = (a.lo << 8) | b[i];
  return a;
}

void toBytes(const Address& a, unsigned char* b) {
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(a.hi >> (56 - 8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = static_cast<unsigned char>(a.lo >> (56 - 8 * i));
}

bool isV4Mapped(const Address& a) { return a.hi == 0 && (a.lo >> 32) == 0xffffull; }

}  // namespace

Address masked(const Address& a, uint32_t bits) {
  Address m;
  if (bits >= 128) return a;
  if (bits == 0) return m;
  if (bits <= 64) {
    m.hi = bits == 64 ? a.hi : a.hi & ~(~0ull >> bits);
  } else {
    m.hi = a.hi;
    m.lo = a.lo & ~(~0ull >> (bits - 64));
  }
  return m;
}

std::optional<Address> parseAddress(std::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  char buf[64];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  unsigned char bytes[16] = {};
  if (text.find(':') == std::string_view::npos) {
    // inet_pton(AF_INET) takes exactly the dotted-decimal quad (no octal, no short forms).
    if (inet_pton(AF_INET, buf, bytes + 12) != 1) return std::nullopt;
    bytes[10] = 0xff;
    bytes[11] = 0xff;
    return fromBytes(bytes);
  }
  if (inet_pton(AF_INET6, buf, bytes) != 1) return std::nullopt;
  return fromBytes(bytes);
}

std::optional<Address> parseHostPort(std::string_view text) {
  auto validPort = [](std::string_view p) {
    if (p.empty() || p.size() > 5) return false;
    for (char c : p) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !validPort(rest.substr(1)))) return std::nullopt;
    std::string_view inner = text.substr(1, close - 1);
    if (inner.find(':') == std::string_view::npos) return std::nullopt;  // "[1.2.3.4]"
    return parseAddress(inner);
  }
  size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.find(':', colon + 1) == std::string_view::npos) {
    // Exactly one colon: IPv4 with a port.
    if (!validPort(text.substr(colon + 1))) return std::nullopt;
    std::string_view host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos) return std::nullopt;
    return parseAddress(host);
  }
  return parseAddress(text);
}

std::string formatAddress(const Address& a) {
  unsigned char bytes[16];
  toBytes(a, bytes);
  char buf[INET6_ADDRSTRLEN];
  if (isV4Mapped(a)) {
    inet_ntop(AF_INET, bytes + 12, buf, sizeof(buf));
  } else {
    inet_ntop(AF_INET6, bytes, buf, sizeof(buf));
  }
  return buf;
}

std::optional<Cidr> parseCidr(std::string_view text, std::string* why) {
  std::string_view addr = text;
  std::optional<uint32_t> len;
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    addr = text.substr(0, slash);
    std::string_view digits = text.substr(slash + 1);
    uint32_t v = 0;
    if (digits.empty() || digits.size() > 3) {
      *why = "'" + std::string(text) + "': expected a prefix length after '/'";
      return std::nullopt;
    }
    for (char c : digits) {
      if (c < '0' || c > '9') {
        *why = "'" + std::string(text) + "': expected a prefix length after '/'";
        return std::nullopt;
      }
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    len = v;
  }
  std::optional<Address> a = parseAddress(addr);
  if (!a) {
    *why = "'" + std::string(text) + "' is not an IPv4 or IPv6 address or CIDR";
    return std::nullopt;
  }
  bool v4 = addr.find(':') == std::string_view::npos;
  uint32_t max = v4 ? 32 : 128;
  uint32_t n = len.value_or(max);
  if (n > max) {
    *why = "'" + std::string(text) + "': prefix length must be 0.." + std::to_string(max);
    return std::nullopt;
  }
  uint32_t bits = v4 ? 96 + n : n;
  Cidr c{masked(*a, bits), bits};
  if (c.network != *a) {
    *why = "'" + std::string(text) + "' has host bits set (did you mean " +
           formatAddress(c.network) + "/" + std::to_string(n) + "?)";
    return std::nullopt;
  }
  return c;
}

void CidrSet::add(const Cidr& cidr) {
  if (by_length_.empty()) by_length_.resize(129);
  if (by_length_[cidr.bits].insert(cidr.network).second) ++size_;
  if (std::find(lengths_.begin(), lengths_.end(), cidr.bits) == lengths_.end()) {
    lengths_.push_back(cidr.bits);
    std::sort(lengths_.rbegin(), lengths_.rend());
  }
}

bool CidrSet::contains(const Address& a) const {
  for (uint32_t bits : lengths_) {
    if (by_length_[bits].count(masked(a, bits)) != 0) return true;
  }
  return false;
}

}  // namespace sluice::filters::ip
