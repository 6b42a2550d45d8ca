// cors — the CORS protocol of the Fetch standard
// (https://fetch.spec.whatwg.org/#http-cors-protocol) answered at the gateway.
//
// Requests without an Origin header pass untouched. With one:
//  - A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered here, never
//    sent upstream: 204 with Access-Control-Allow-Origin, -Allow-Credentials (when
//    allow_credentials), -Allow-Methods (the configured list; with "*" the requested method),
//    -Allow-Headers (the requested headers, when every one is allowed), -Max-Age (when max_age is
//    set) and `Vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers`.
//    A preflight whose origin, method or any requested header is not allowed gets 403
//    (application/json, the detail names which) without CORS headers: the browser fails the
//    request either way (a preflight needs an ok status and matching headers), and a 403 shows in
//    the access log and the browser's network panel as what it is.
//  - Any other request goes on upstream. When its origin is allowed, the response gets
//    Access-Control-Allow-Origin (replacing one the upstream set), -Allow-Credentials and
//    -Expose-Headers. Whenever the answer depends on the Origin (anything but a plain "*" list),
//    `Vary: Origin` is appended to the response (unless Vary already names Origin or is "*"), also
//    when the origin is not allowed, so a shared cache does not serve one origin's answer to
//    another. A disallowed origin's response is otherwise left as it is: the browser withholds it
//    from the page.
// Put cors first in the chain: its preflight answer then precedes authentication (browsers send
// preflights without credentials), and local replies of later filters (401, 429) still get the
// CORS headers, so the page can read them.
//
// YAML:
//   filters:
//     - name: cors
//       config:
//         allow_origins: [https://app.example.com, "https://*.example.com"]   # see origin.h
//         allow_origin_regex: ['https://pr-[0-9]+\.preview\.example\.com']   # whole-value match
//         allow_methods: [GET, HEAD, POST, PUT, DELETE]   # default GET, HEAD, POST; "*" = any
//         allow_headers: [Content-Type, Authorization]    # default none; "*" = any requested
//         expose_headers: [X-Request-Id]                  # default none
//         max_age: 600                                    # seconds, 0..86400; default: not sent
//         allow_credentials: false
//         reflect_any_origin: false                       # allow every origin, echoing it
//
// The Fetch standard forbids `Access-Control-Allow-Origin: *` with credentials, so
// allow_credentials with "*" in allow_origins is refused at load; an operator who really wants
// every origin with credentials says so with reflect_any_origin (each origin is echoed back — any
// site can then make credentialed requests, so only for APIs that authenticate otherwise).
// expose_headers "*" means the literal name with credentials, so that combination is refused too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "filters/cors/origin.h"

namespace sluice::filters {

// Immutable after construction (main thread); read by every worker.
struct CorsConfig {
  explicit CorsConfig(const sdk::ConfigNode& node);

  cors::OriginMatcher origins;
  bool reflect_any_origin = false;
  std::vector<std::string> allow_methods{"GET", "HEAD", "POST"};
  bool any_method = false;
  std::vector<std::string> allow_headers;  // lowercased
  bool any_header = false;
  std::string expose_headers;  // joined with ", "
  std::optional<uint32_t> max_age;
  bool allow_credentials = false;
  std::string allow_methods_value;  // joined with ", "

  // The Access-Control-Allow-Origin value for `origin`, or nullopt when it is not allowed.
  std::optional<std::string> allowOrigin(std::string_view origin) const;
  // True when the ACAO answer depends on the request's Origin (Vary: Origin needed).
  bool variesByOrigin() const {
    return reflect_any_origin || allow_credentials || !origins.allowsAny();
  }
  bool methodAllowed(std::string_view method) const;
  bool headerAllowed(std::string_view lowercase_name) const;
};

class CorsFilter : public sdk::Filter {
 public:
  explicit CorsFilter(const CorsConfig& config) : config_(config) {}
  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;
  sdk::FilterStatus onResponseHeaders(sdk::Stream& stream, bool end_stream) override;

 private:
  sdk::FilterStatus preflight(sdk::Stream& stream, std::string_view origin);

  const CorsConfig& config_;
  bool cors_request_ = false;  // an actual (non-preflight) request with an Origin
  std::optional<std::string> allow_origin_;
};

}  // namespace sluice::filters
