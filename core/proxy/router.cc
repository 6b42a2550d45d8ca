#include "core/proxy/router.h"

#include "absl/strings/match.h"

namespace sluice::proxy {
namespace {

// Path part of an origin-form or absolute-form target; empty when neither.
std::string_view originPath(std::string_view target) {
  if (!target.empty() && target[0] == '/') return target;
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() > scheme.size() &&
        absl::StartsWithIgnoreCase(absl::string_view(target.data(), scheme.size()),
                                   absl::string_view(scheme.data(), scheme.size()))) {
      std::string_view rest = target.substr(scheme.size());
      size_t slash = rest.find_first_of("/?");
      if (slash == std::string_view::npos) return "/";
      if (rest[slash] == '?') return {};  // "http://h?q": no path; treat as unroutable
      return rest.substr(slash);
    }
  }
  return {};
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// "." or ".." with each dot possibly written %2e / %2E.
bool isDotSegment(std::string_view seg) {
  size_t dots = 0;
  for (size_t i = 0; i < seg.size();) {
    if (seg[i] == '.') {
      ++i;
    } else if (seg[i] == '%' && i + 2 < seg.size() && seg[i + 1] == '2' &&
               (seg[i + 2] == 'e' || seg[i + 2] == 'E')) {
      i += 3;
    } else {
      return false;
    }
    if (++dots > 2) return false;
  }
  return dots == 1 || dots == 2;
}

}  // namespace

bool hasDotSegment(std::string_view target) {
  std::string_view path = originPath(target);
  path = path.substr(0, path.find('?'));
  // Every dot segment has a '.' or a '%' (most paths have neither).
  if (path.find_first_of(".%") == std::string_view::npos) return false;
  size_t start = 0;
  while (start <= path.size()) {
    // '\' and '#' end a segment too: neither belongs in a request path (RFC 3986 §3.3), but
    // some servers read '\' as '/' or drop a '#...' fragment before resolving dot segments.
    size_t sep = path.find_first_of("/\\#", start);
    size_t end = sep == std::string_view::npos ? path.size() : sep;
    std::string_view seg = path.substr(start, end - start);
    // "..;x": servlet containers drop a segment's ";parameters" before resolving it.
    if (isDotSegment(seg.substr(0, seg.find(';')))) return true;
    if (sep == std::string_view::npos) break;
    start = sep + 1;
  }
  return false;
}

bool route(const config::Config& config, const config::Listener& listener, std::string_view target,
           RouteResult* out, std::string* why) {
  std::string_view path = originPath(target);
  if (path.empty()) {
    *why = "request-target is not a path";
    return false;
  }
  const std::string& ctx = listener.context_path;
  std::string rest_storage;
  std::string_view rest = path;
  if (!ctx.empty()) {
    if (!startsWith(path, ctx) ||
        (path.size() > ctx.size() && path[ctx.size()] != '/' && path[ctx.size()] != '?')) {
      *why = "path is outside the context path " + ctx;
      return false;
    }
    rest = path.substr(ctx.size());
    if (rest.empty() || rest[0] == '?') {
      rest_storage = "/" + std::string(rest);
      rest = rest_storage;
    }
  }
  for (const config::Route& r : config.routes) {
    if (!startsWith(rest, r.prefix)) continue;
    out->cluster = r.cluster;
    out->route = &r;
    if (r.prefix_rewrite.has_value()) {
      out->upstream_path = *r.prefix_rewrite + std::string(rest.substr(r.prefix.size()));
      if (out->upstream_path.empty() || out->upstream_path[0] != '/') {
        out->upstream_path.insert(0, "/");
      }
    } else {
      out->upstream_path = std::string(rest);
    }
    return true;
  }
  size_t end = rest.find_first_of("/?", 1);
  std::string_view segment = rest.substr(1, end == std::string_view::npos ? end : end - 1);
  if (segment.empty()) {
    *why = "no route and no context path segment to name a cluster";
    return false;
  }
  out->cluster = segment;
  out->upstream_path = std::string(rest);
  return true;
}

}  // namespace sluice::proxy
