// Access log line formats: JSON (one object per line with every field) or a format string with
// named fields, e.g. "%{time} %{client_address} \"%{method} %{path}\" %{status}".
//
// Format string syntax: `%{name}` is replaced by field `name` (see fieldNames()); `%{ctx.KEY}`
// by the value filters set under KEY in the request context ("-" when absent; KEY: 1..64 of
// [A-Za-z0-9_.-], e.g. %{ctx.consumer}); `%%` is a literal percent sign; every other character
// is copied. A `%` followed by anything else, an unterminated `%{`, an unknown field name or an
// invalid context key is an error (reported at config load). The JSON format ends each line's
// object with "ctx": {"KEY": "value", ...} ({} when the request context is empty).
//
// Built on the main thread with the config, then shared read-only by the workers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/proxy/request_info.h"

namespace sluice::accesslog {

enum class Field : uint8_t {
  kTime,           // request start, RFC 3339 UTC with milliseconds
  kRequestId,      // X-Request-Id
  kClientAddress,  // "ip:port"
  kTlsVersion,     // "TLSv1.3"; empty on plain connections
  kSni,            // TLS server name; empty on plain connections
  kMethod,
  kPath,            // request-target as received
  kProtocol,        // "HTTP/1.1"
  kStatus,          // 0 when no response was sent
  kBytesIn,         // request body bytes
  kBytesOut,        // response body bytes
  kUpstreamHost,    // "host:port" of the last attempt
  kUpstreamTimeMs,  // last attempt start → upstream response head, ms (3 decimals)
  kTotalTimeMs,     // request head → end, ms (3 decimals)
  kRetries,
  kListener,
  kCluster,
  kLocalReplyFilter,  // the filter that answered locally
  kResponseFlags,     // comma-separated flag names
  kCount,
};

// The name of `field` as written in format strings and as the JSON key.
std::string_view fieldName(Field field);
// The field called `name`; false when there is none.
bool fieldByName(std::string_view name, Field* out);
// "time, request_id, ..." for error messages and docs.
std::string fieldNames();

class Format {
 public:
  // The JSON format (the default).
  Format() = default;

  // Parses a format string; "json" is the JSON format. On error returns false and sets *error
  // (it names the problem and its 0-based byte offset in `text`).
  static bool parse(std::string_view text, Format* out, std::string* error);

  // Appends the line for `info`, '\n' included, to *out. Allocates only when *out must grow.
  void append(const proxy::RequestInfo& info, std::string* out) const;

  bool json() const { return json_; }

 private:
  struct Piece {
    std::string literal;          // copied before the field
    Field field = Field::kCount;  // kCount: no field (trailing literal, or a context key)
    std::string ctx_key;          // %{ctx.KEY}: the key (field is kCount)
  };

  void appendJson(const proxy::RequestInfo& info, std::string* out) const;

  bool json_ = true;
  std::vector<Piece> pieces_;
};

}  // namespace sluice::accesslog
