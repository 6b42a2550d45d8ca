#include "core/proxy/hash_key.h"

#include <string_view>

namespace sluice::proxy {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Value of `name` in "a=1; b=2" (RFC 6265 §4.2.1), or empty.
std::string_view cookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view pair = trim(header.substr(0, semi));
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
    if (semi == std::string_view::npos) break;
    header.remove_prefix(semi + 1);
  }
  return {};
}

// Raw value of query parameter `name` in `target`, or empty.
std::string_view queryValue(std::string_view target, std::string_view name) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) return eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return {};
}

}  // namespace

std::string hashKey(const config::HashKey& policy, const http::MessageHead& request,
                    const std::string& client_ip) {
  using Source = config::HashKey::Source;
  switch (policy.source) {
    case Source::kNone:
      return {};
    case Source::kHeader: {
      const std::string_view* v = request.headers.get(policy.name);
      return v != nullptr ? std::string(*v) : std::string();
    }
    case Source::kCookie:
      for (size_t i = 0; const std::string_view* v = request.headers.get("cookie", i); ++i) {
        std::string_view c = cookieValue(*v, policy.name);
        if (!c.empty()) return std::string(c);
      }
      return {};
    case Source::kQuery:
      return std::string(queryValue(request.target, policy.name));
    case Source::kClientIp:
      return client_ip;
    case Source::kPath: {
      std::string_view t = request.target;
      return std::string(t.substr(0, t.find('?')));
    }
  }
  return {};
}

}  // namespace sluice::proxy
