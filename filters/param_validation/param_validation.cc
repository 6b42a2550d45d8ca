#include "filters/param_validation/param_validation.h"

#include <nlohmann/json.hpp>

#include "filters/param_validation/form.h"

namespace sluice::filters {
namespace {

std::vector<pv::ScalarRule> readRules(const sdk::ConfigNode& node, bool header_names) {
  std::vector<pv::ScalarRule> rules;
  if (node.isNull()) return rules;
  if (!node.isMap()) node.fail("expected a map of names to rules");
  for (size_t i = 0; i < node.size(); ++i) {
    std::string name(node.keyAt(i));
    sdk::ConfigNode rule = node.at(i);
    if (header_names && !sdk::isHeaderName(name)) {
      rule.fail("'" + name + "' is not a header name");
    }
    if (name.empty()) rule.fail("empty parameter name");
    if (!rule.isMap() && !rule.isNull()) rule.fail("expected a map (required, type, ...)");
    for (const pv::ScalarRule& r : rules) {
      if (header_names ? sdk::equalsIgnoreCase(r.name, name) : r.name == name) {
        rule.fail("'" + name + "' has two rules");
      }
    }
    rules.emplace_back(name, rule);
  }
  return rules;
}

// Checks every occurrence in `values` against `rule`, appending at most one violation.
void checkOccurrences(const pv::ScalarRule& rule, const std::vector<std::string_view>& values,
                      const char* in, std::vector<pv::Violation>* out) {
  if (values.empty()) {
    if (rule.required) out->push_back({in, rule.name, "is required"});
    return;
  }
  if (values.size() > 1 && !rule.repeated) {
    out->push_back({in, rule.name, "must not be repeated"});
    return;
  }
  for (std::string_view v : values) {
    if (std::optional<std::string> why = rule.check(v)) {
      out->push_back({in, rule.name, std::move(*why)});
      return;
    }
  }
}

void replyViolations(sdk::Stream& stream, const std::vector<pv::Violation>& violations) {
  stream.sendLocalReply(400, violationsBody(violations), "application/json");
}

}  // namespace

ParamValidationConfig::ParamValidationConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"query", "headers", "body", "unknown_query"});
  query = readRules(node["query"], false);
  headers = readRules(node["headers"], true);
  std::string unknown = node.getString("unknown_query", "allow");
  if (unknown == "reject") {
    reject_unknown_query = true;
  } else if (unknown != "allow") {
    node["unknown_query"].fail("expected allow or reject");
  }
  if (node.has("body")) {
    sdk::ConfigNode b = node["body"];
    if (!b.isMap()) b.fail("expected a map (max_bytes, required, fields, ...)");
    body.emplace(b);
  }
}

void ParamValidationConfig::checkQuery(std::string_view target,
                                       std::vector<pv::Violation>* out) const {
  if (query.empty() && !reject_unknown_query) return;
  pv::QueryParams params = pv::parseQuery(pv::queryOf(target));
  for (const pv::ScalarRule& rule : query) {
    std::vector<std::string_view> values;
    for (const auto& [name, value] : params) {
      if (name == rule.name) values.push_back(value);
    }
    checkOccurrences(rule, values, "query", out);
  }
  if (!reject_unknown_query) return;
  std::vector<std::string_view> reported;
  for (const auto& [name, value] : params) {
    bool known = false;
    for (const pv::ScalarRule& rule : query) known = known || rule.name == name;
    for (std::string_view r : reported) known = known || r == name;
    if (known) continue;
    reported.push_back(name);
    out->push_back({"query", name, "is not allowed"});
  }
}

void ParamValidationConfig::checkHeaders(const sdk::Stream& stream,
                                         std::vector<pv::Violation>* out) const {
  for (const pv::ScalarRule& rule : headers) {
    std::vector<std::string_view> values;
    for (size_t i = 0;; ++i) {
      std::optional<std::string_view> v = stream.header(sdk::HeaderMap::kRequest, rule.name, i);
      if (!v) break;
      values.push_back(*v);
    }
    checkOccurrences(rule, values, "header", out);
  }
}

std::string violationsBody(const std::vector<pv::Violation>& violations) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const pv::Violation& v : violations) {
    list.push_back({{"in", v.in}, {"name", v.name}, {"reason", v.reason}});
  }
  nlohmann::ordered_json body;
  body["status"] = 400;
  body["error"] = "invalid request";
  body["violations"] = std::move(list);
  // A query name may hold any bytes: invalid UTF-8 is replaced (U+FFFD), never thrown on.
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

sdk::FilterStatus ParamValidationFilter::onRequestHeaders(sdk::Stream& stream, bool end_stream) {
  std::vector<pv::Violation> violations;
  config_.checkQuery(stream.path(), &violations);
  config_.checkHeaders(stream, &violations);
  const std::optional<pv::BodyRules>& body = config_.body;
  if (body && body->appliesTo(stream.method())) {
    if (end_stream) {
      bool any_required = false;
      for (const pv::FieldRule& f : body->fields) any_required = any_required || f.required;
      if (any_required) violations.push_back({"body", "", "a JSON body is required"});
    } else {
      std::optional<std::string_view> type = stream.requestHeader("content-type");
      if (!type || !pv::isJsonMediaType(*type)) {
        stream.sendLocalReply(415,
                              "{\"status\":415,\"error\":\"unsupported media type\",\"detail\":"
                              "\"the body must be JSON (Content-Type: application/json)\"}\n",
                              "application/json");
        return sdk::FilterStatus::kStop;
      }
      if (!stream.bufferBody(sdk::Body::kRequest, body->max_bytes)) {
        return sdk::FilterStatus::kError;  // the host cannot buffer: failure_mode decides
      }
      awaiting_body_ = true;
      violations_ = std::move(violations);
      return sdk::FilterStatus::kContinue;
    }
  }
  if (violations.empty()) return sdk::FilterStatus::kContinue;
  replyViolations(stream, violations);
  return sdk::FilterStatus::kStop;
}

sdk::FilterStatus ParamValidationFilter::onRequestBody(sdk::Stream& stream, std::string_view data,
                                                       bool end_stream) {
  if (!awaiting_body_) return sdk::FilterStatus::kContinue;
  if (!end_stream) return sdk::FilterStatus::kError;  // bufferBody promised the whole body
  awaiting_body_ = false;
  config_.body->validate(data, &violations_);
  if (violations_.empty()) return sdk::FilterStatus::kContinue;
  replyViolations(stream, violations_);
  return sdk::FilterStatus::kStop;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN("param_validation", "1.0.0", sluice::filters::ParamValidationConfig,
                     sluice::filters::ParamValidationFilter)
