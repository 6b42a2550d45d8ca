#include "filters/cors/origin.h"

#include <utility>

#include "filters/common/regex.h"

namespace sluice::filters::cors {
namespace {

constexpr size_t kMaxOriginLength = 1024;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool isSchemeChar(char c, bool first) {
  bool alpha = (c >= 'a' && c <= 'z');
  if (first) return alpha;
  return alpha || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

// A DNS-style host (labels of letters, digits, '-' and '_') or a bracketed IPv6 literal.
bool validHost(std::string_view h) {
  if (h.empty() || h.size() > 253) return false;
  if (h.front() == '[') {
    if (h.back() != ']' || h.size() < 4) return false;
    for (char c : h.substr(1, h.size() - 2)) {
      bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.';
      if (!ok) return false;
    }
    return true;
  }
  if (h.front() == '.' || h.back() == '.' || h.find("..") != std::string_view::npos) return false;
  for (char c : h) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool validPort(std::string_view p) {
  if (p.empty() || p.size() > 5) return false;
  for (char c : p) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Splits "[scheme://]host[:port]" (already lowercased); `scheme_required` for request values.
std::optional<OriginParts> split(std::string_view s, bool scheme_required) {
  OriginParts parts;
  size_t sep = s.find("://");
  if (sep != std::string_view::npos) {
    std::string_view scheme = s.substr(0, sep);
    if (scheme.empty()) return std::nullopt;
    for (size_t i = 0; i < scheme.size(); ++i) {
      if (!isSchemeChar(scheme[i], i == 0)) return std::nullopt;
    }
    parts.scheme = std::string(scheme);
    s.remove_prefix(sep + 3);
  } else if (scheme_required) {
    return std::nullopt;
  }
  size_t colon = s.rfind(':');
  if (colon != std::string_view::npos && s.find(']', colon) == std::string_view::npos) {
    parts.port = std::string(s.substr(colon + 1));
    if (!validPort(parts.port)) return std::nullopt;
    s = s.substr(0, colon);
  }
  parts.host = std::string(s);
  return parts;
}

bool schemeMatches(const std::string& want, const std::string& got) {
  return want.empty() ? (got == "http" || got == "https") : want == got;
}

}  // namespace

std::optional<OriginParts> parseOrigin(std::string_view origin) {
  if (origin.size() > kMaxOriginLength) return std::nullopt;
  std::optional<OriginParts> p = split(lower(origin), true);
  if (!p || !validHost(p->host)) return std::nullopt;
  return p;
}

bool OriginMatcher::addEntry(std::string_view entry, std::string* why) {
  std::string e = lower(entry);
  if (e == "*") {
    any_ = true;
    return true;
  }
  if (e == "null") {
    null_ = true;
    return true;
  }
  std::optional<OriginParts> p = split(e, false);
  if (!p || p->host.empty()) {
    *why = "'" + std::string(entry) + "' is not an origin (scheme://host[:port])";
    return false;
  }
  if (p->host.find('/') != std::string::npos || p->host.find('@') != std::string::npos) {
    *why = "'" + std::string(entry) +
           "' is not an origin: an origin has no path or user (e.g. https://app.example.com)";
    return false;
  }
  if (p->host.rfind("*.", 0) == 0) {
    std::string rest = p->host.substr(1);  // ".example.com"
    if (!validHost(rest.substr(1)) || rest.find('*') != std::string::npos) {
      *why = "'" + std::string(entry) + "': a wildcard must be a leading '*.' before a domain";
      return false;
    }
    wildcard_.push_back({p->scheme, rest, p->port});
    return true;
  }
  if (!validHost(p->host)) {
    *why = "'" + std::string(entry) + "' has an invalid host (a '*' may only lead: *.example.com)";
    return false;
  }
  exact_.push_back(*p);
  return true;
}

bool OriginMatcher::addRegex(const std::string& pattern, std::string* why) {
  std::shared_ptr<const re2::RE2> re = compileRegex(pattern, why);
  if (!re) return false;
  regex_.push_back(std::move(re));
  return true;
}

bool OriginMatcher::matchesSpecific(std::string_view origin) const {
  if (origin.size() > kMaxOriginLength) return false;
  if (origin == "null") {
    if (null_) return true;
  } else if (std::optional<OriginParts> p = parseOrigin(origin)) {
    for (const OriginParts& e : exact_) {
      if (schemeMatches(e.scheme, p->scheme) && e.host == p->host && e.port == p->port) {
        return true;
      }
    }
    for (const Wildcard& w : wildcard_) {
      if (schemeMatches(w.scheme, p->scheme) && w.port == p->port &&
          p->host.size() > w.suffix.size() &&
          p->host.compare(p->host.size() - w.suffix.size(), w.suffix.size(), w.suffix) == 0) {
        return true;
      }
    }
  }
  for (const std::shared_ptr<const re2::RE2>& r : regex_) {
    if (re2::RE2::FullMatch(re2::StringPiece(origin.data(), origin.size()), *r)) return true;
  }
  return false;
}

}  // namespace sluice::filters::cors
