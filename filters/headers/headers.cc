#include "filters/headers/headers.h"

#include <string_view>

namespace sluice::filters {
namespace {

// Refuses a name that is no token or names a framing header; `at` is where to point.
std::string checkName(std::string_view name, const sdk::ConfigNode& at) {
  if (!sdk::isHeaderName(name)) at.fail("'" + std::string(name) + "' is not a header name");
  if (sdk::equalsIgnoreCase(name, "content-length") ||
      sdk::equalsIgnoreCase(name, "transfer-encoding")) {
    at.fail(std::string(name) + " cannot be changed: the proxy owns message framing");
  }
  return std::string(name);
}

std::string checkValue(const sdk::ConfigNode& node) {
  std::string value = node.asString();
  if (!sdk::isHeaderValue(value)) node.fail("header value contains CR, LF or NUL");
  return value;
}

// `{name: value}` pairs; with `lists`, a value may be a list (one field per element).
std::vector<std::pair<std::string, std::string>> readPairs(const sdk::ConfigNode& node,
                                                           bool lists) {
  std::vector<std::pair<std::string, std::string>> out;
  if (node.isNull()) return out;
  if (!node.isMap()) node.fail("expected a map of header names to values");
  for (size_t i = 0; i < node.size(); ++i) {
    sdk::ConfigNode value = node.at(i);
    std::string name = checkName(node.keyAt(i), value.line() != 0 ? value : node);
    if (lists && value.isSequence()) {
      for (size_t j = 0; j < value.size(); ++j) out.emplace_back(name, checkValue(value.at(j)));
    } else {
      out.emplace_back(name, checkValue(value));
    }
  }
  return out;
}

HeaderOps readOps(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"remove", "set", "add"});
  HeaderOps ops;
  sdk::ConfigNode remove = node["remove"];
  if (!remove.isNull()) {
    if (!remove.isSequence() && !remove.isScalar()) remove.fail("expected a list of header names");
    for (size_t i = 0; i < (remove.isScalar() ? 1 : remove.size()); ++i) {
      sdk::ConfigNode item = remove.isScalar() ? remove : remove.at(i);
      ops.remove.push_back(checkName(item.asString(), item));
    }
  }
  ops.set = readPairs(node["set"], false);
  ops.add = readPairs(node["add"], true);
  return ops;
}

}  // namespace

HeadersConfig::HeadersConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"request", "response"});
  request = readOps(node["request"]);
  response = readOps(node["response"]);
}

void HeaderOps::apply(sdk::Stream& stream, sdk::HeaderMap map) const {
  for (const std::string& name : remove) stream.removeHeader(map, name);
  for (const auto& [name, value] : set) stream.setHeader(map, name, value);
  for (const auto& [name, value] : add) stream.addHeader(map, name, value);
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN("headers", "1.0.0", sluice::filters::HeadersConfig,
                     sluice::filters::HeadersFilter)
