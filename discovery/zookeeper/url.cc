#include "discovery/zookeeper/url.h"

#include <cctype>

namespace sluice::zookeeper {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool percentDecode(std::string_view in, bool plus_as_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+' && plus_as_space) {
      out->push_back(' ');
    } else if (c != '%') {
      out->push_back(c);
    } else {
      int hi = i + 1 < in.size() ? hexValue(in[i + 1]) : -1;
      int lo = i + 2 < in.size() ? hexValue(in[i + 2]) : -1;
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
  }
  return true;
}

std::string Url::param(std::string_view name, std::string def) const {
  for (const auto& [k, v] : params) {
    if (k == name) return v;
  }
  return def;
}

bool Url::hasParam(std::string_view name) const {
  for (const auto& kv : params) {
    if (kv.first == name) return true;
  }
  return false;
}

bool parseUrl(std::string_view text, Url* out, std::string* error) {
  *out = Url();
  size_t sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) {
    *error = "missing 'scheme://'";
    return false;
  }
  for (char c : text.substr(0, sep)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') {
      *error = "bad scheme '" + std::string(text.substr(0, sep)) + "'";
      return false;
    }
    out->scheme.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  std::string_view rest = text.substr(sep + 3);
  size_t query_at = rest.find('?');
  std::string_view query = query_at == std::string_view::npos ? "" : rest.substr(query_at + 1);
  rest = rest.substr(0, query_at);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  out->path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1));
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority = authority.substr(at + 1);  // drop user:password
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      *error = "unterminated '[' in host";
      return false;
    }
    out->host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() == ':') port = after.substr(1);
  } else {
    size_t colon = authority.rfind(':');
    out->host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (out->host.empty()) {
    *error = "missing host";
    return false;
  }
  if (port.empty()) {
    *error = "missing port";
    return false;
  }
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9' || value > 65535) {
      value = -1;
      break;
    }
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) {
    *error = "bad port '" + std::string(port) + "'";
    return false;
  }
  out->port = value;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    out->params.emplace_back(std::string(pair.substr(0, eq)),
                             eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
  }
  return true;
}

}  // namespace sluice::zookeeper
