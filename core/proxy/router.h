// Routing: from a request-target to (cluster, upstream path).
//
// 1. The listener's context_path ("/gateway") is stripped; a path outside it has no route.
// 2. Explicit routes are tried in config order; the first whose prefix matches wins, and its
//    prefix_rewrite (when set) replaces the prefix.
// 3. Otherwise the first path segment names the cluster and the path is kept:
//    "/gateway/restapi/users/7" → cluster "restapi", upstream path "/restapi/users/7".
#pragma once

#include <string>
#include <string_view>

#include "core/config/config.h"

namespace sluice::proxy {

struct RouteResult {
  // The cluster's name: points into the config passed to route() (an explicit route) or into the
  // `target` passed to it (first-segment routing); valid while both are.
  std::string_view cluster;
  std::string upstream_path;  // origin-form path plus query, as sent upstream
  // The explicit route that matched (null for first-segment routing); points into the config
  // passed to route(), valid while it is.
  const config::Route* route = nullptr;
};

// Returns true and fills `out` when a route applies; false (and a reason in `why`) when none
// does. Absolute-form targets ("http://host/p") route by their path (RFC 9112 §3.2.2).
bool route(const config::Config& config, const config::Listener& listener, std::string_view target,
           RouteResult* out, std::string* why);

// True when the path of `target` (before any '?') has a dot segment: a segment that is "." or
// "..", also percent-encoded ("%2e", "%2E%2e"; RFC 3986 §2.3: '.' is unreserved, so "%2e" is
// the same character), with or without ";parameters" ("..;x", as servlet containers read it);
// '\' and '#' separate segments as '/' does (some servers read them so). Routing matches prefixes
// on the path as sent, and the path goes upstream unchanged, so "/public/../admin" would match a
// "/public" route (and run its chain, e.g. with auth disabled) while a backend that removes dot
// segments (RFC 3986 §5.2.4, as most servers and frameworks do) serves "/admin". The stream refuses
// such requests with 400 before routing; clients never need them (browsers and curl remove dot
// segments before sending).
bool hasDotSegment(std::string_view target);

}  // namespace sluice::proxy
