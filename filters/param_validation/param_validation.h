// param_validation — checks a request's query parameters, headers and JSON body against rules and
// answers 400 listing every violation, so that malformed requests never reach the backend.
// Meant per route (routes[].filters with the route's own config) as well as per listener.
//
// Query strings are parsed as the URL standard's application/x-www-form-urlencoded (form.h:
// '+' is a space, %XX decoded, bytes compared as bytes). A parameter or header that appears more
// than once is refused ("must not be repeated") unless its rule says `repeated: true`, and then
// every occurrence is checked: a gateway that checks one occurrence while the backend reads
// another could be bypassed (HTTP parameter pollution). Header rules compare names
// case-insensitively; several fields of one header are occurrences (a comma list in one field is
// one value).
//
// The body is checked when body rules exist and the request's method is in body.methods: its
// Content-Type must be JSON (application/json or application/*+json) or the answer is 415; the
// body is read whole (Stream::bufferBody, at most body.max_bytes, larger → 413 from the host),
// parsed with nlohmann-json with a depth limit and checked (body_rules.h). A request of such a
// method without a body breaks the rules only when some field is required ("a JSON body is
// required"). The body goes upstream unchanged.
//
// YAML:
//   filters:
//     - name: param_validation
//       config:
//         query:
//           page: {type: int, min: 1, max: 1000}
//           sort: {type: enum, values: [asc, desc]}
//           q: {required: true, max_length: 200}
//         headers:
//           X-Tenant: {required: true, pattern: '^[a-z0-9-]{1,32}$'}
//         unknown_query: allow          # allow | reject (a parameter without a rule)
//         body: {max_bytes: 65536, required: [name], fields: {name: {type: string}}}
// Rule keys: rules.h (query, headers) and body_rules.h (body). Bad rules are refused at load
// with their line: unknown types or keys, min > max, regexes RE2 refuses (pattern.h: RE2 syntax,
// matched in linear time; no back-references or lookaround).
//
// Answers (application/json):
//   400 {"status":400,"error":"invalid request","violations":[{"in":"query","name":"page",
//        "reason":"must be an integer"}, ...]}   in: query | header | body; violations in rule
//        order: query, then headers, then body ("name": "" for the body as a whole)
//   415 {"status":415,"error":"unsupported media type","detail":"..."}
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "filters/param_validation/body_rules.h"
#include "filters/param_validation/rules.h"

namespace sluice::filters {

// Immutable after construction (main thread); read by every worker.
struct ParamValidationConfig {
  explicit ParamValidationConfig(const sdk::ConfigNode& node);

  // Appends the violations of the request's query (`target`: path plus query) and headers.
  void checkQuery(std::string_view target, std::vector<pv::Violation>* out) const;
  void checkHeaders(const sdk::Stream& stream, std::vector<pv::Violation>* out) const;

  std::vector<pv::ScalarRule> query;
  std::vector<pv::ScalarRule> headers;
  bool reject_unknown_query = false;
  std::optional<pv::BodyRules> body;
};

// The 400 body for `violations` (valid JSON whatever bytes the names hold).
std::string violationsBody(const std::vector<pv::Violation>& violations);

class ParamValidationFilter : public sdk::Filter {
 public:
  explicit ParamValidationFilter(const ParamValidationConfig& config) : config_(config) {}
  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override;
  sdk::FilterStatus onRequestBody(sdk::Stream& stream, std::string_view data,
                                  bool end_stream) override;

 private:
  const ParamValidationConfig& config_;
  bool awaiting_body_ = false;
  std::vector<pv::Violation> violations_;  // of the query and headers, while the body is read
};

}  // namespace sluice::filters
