#include "discovery/file/endpoints_file.h"

#include <yaml-cpp/yaml.h>

#include <set>
#include <utility>

namespace sluice::discovery {
namespace {

// Collects errors while walking the document; every check continues after a failure, so one
// pass reports every problem.
class Parser {
 public:
  explicit Parser(ParsedEndpoints* out) : out_(out) {}

  void document(const YAML::Node& root) {
    if (root.IsNull()) {
      fail(root, "the file is empty (expected a 'clusters' map; write 'clusters: {}' for none)");
      return;
    }
    if (!root.IsMap()) {
      fail(root, "expected a map with the key 'clusters'");
      return;
    }
    bool seen = false;
    for (const auto& kv : root) {  // (bound per pass; it-> would dangle)
      std::string key = kv.first.Scalar();
      if (key != "clusters") {
        fail(kv.first, "unknown key '" + key + "' (expected: clusters)");
      } else if (seen) {
        fail(kv.first, "key 'clusters' given twice");
      } else {
        seen = true;
        clusters(kv.first, kv.second);
      }
    }
    if (!seen) fail(root, "missing key 'clusters' (write 'clusters: {}' for none)");
  }

 private:
  void clusters(const YAML::Node& key, const YAML::Node& map) {
    if (map.IsNull()) {
      fail(key, "'clusters' is empty (write 'clusters: {}' to publish no clusters)");
      return;
    }
    if (!map.IsMap()) {
      fail(map, "expected a map of cluster names to endpoint lists");
      return;
    }
    std::set<std::string> names;
    for (const auto& kv : map) {
      const YAML::Node& name_node = kv.first;
      std::string name = name_node.IsScalar() ? name_node.Scalar() : std::string();
      if (!isClusterName(name)) {
        fail(name_node, "bad cluster name '" + name + "' (want 1..200 of A-Z a-z 0-9 . _ -)");
        continue;
      }
      if (!names.insert(name).second) {
        fail(name_node, "cluster '" + name + "' given twice");
        continue;
      }
      cluster(name, name_node, kv.second);
    }
  }

  void cluster(const std::string& name, const YAML::Node& key, const YAML::Node& list) {
    if (list.IsNull()) {
      fail(key, "cluster '" + name + "' has no value (write [] for a cluster with no endpoints)");
      return;
    }
    if (!list.IsSequence()) {
      fail(list, "cluster '" + name + "': expected a list of endpoints");
      return;
    }
    sdk::DiscoveredCluster out{name, {}};
    std::set<std::string> addresses;
    for (const YAML::Node& item : list) {
      sdk::Endpoint endpoint;
      YAML::Node where = item;
      if (!endpointOf(item, &endpoint, &where)) continue;
      if (!addresses.insert(endpoint.address).second) {
        fail(where, "cluster '" + name + "': address '" + endpoint.address + "' given twice");
        continue;
      }
      out.endpoints.push_back(std::move(endpoint));
    }
    out_->clusters.push_back(std::move(out));
  }

  // Reads "host:port" or {address, weight, zone, metadata}. `*where` is set to the address node.
  bool endpointOf(const YAML::Node& item, sdk::Endpoint* out, YAML::Node* where) {
    if (item.IsScalar()) return address(item, &out->address);
    if (!item.IsMap()) {
      fail(item, "expected an endpoint: \"host:port\" or {address, weight, zone, metadata}");
      return false;
    }
    bool ok = true;
    bool has_address = false;
    std::set<std::string> keys;
    for (const auto& kv : item) {
      std::string key = kv.first.Scalar();
      const YAML::Node& value = kv.second;
      if (!keys.insert(key).second) {
        ok = fail(kv.first, "key '" + key + "' given twice");
      } else if (key == "address") {
        has_address = true;
        where->reset(value);  // rebinds the handle (operator= would overwrite the node)
        ok = address(value, &out->address) && ok;
      } else if (key == "weight") {
        ok = weight(kv.first, value, &out->weight) && ok;
      } else if (key == "zone") {
        ok = string(kv.first, value, "zone", &out->zone) && ok;
      } else if (key == "metadata") {
        ok = metadata(kv.first, value, &out->metadata) && ok;
      } else {
        ok = fail(kv.first,
                  "unknown key '" + key + "' (expected one of: address, weight, zone, metadata)");
      }
    }
    if (!has_address) ok = fail(item, "endpoint without 'address'");
    return ok;
  }

  bool address(const YAML::Node& node, std::string* out) {
    if (!node.IsScalar()) return fail(node, "expected an address \"host:port\"");
    std::string error;
    if (!checkAddress(node.Scalar(), &error)) {
      return fail(node, "invalid address '" + node.Scalar() + "': " + error);
    }
    *out = node.Scalar();
    return true;
  }

  bool weight(const YAML::Node& key, const YAML::Node& node, uint32_t* out) {
    std::string text = node.IsScalar() && node.Tag() == "?" ? node.Scalar() : std::string();
    bool digits = !text.empty() && text.size() <= 6;
    for (char c : text) digits = digits && c >= '0' && c <= '9';
    int64_t v = digits ? std::stoll(text) : 0;
    if (!digits || v < kMinWeight || v > kMaxWeight) {
      const YAML::Node& at = node.IsNull() ? key : node;
      return fail(at, "weight: expected an integer " + std::to_string(kMinWeight) + ".." +
                          std::to_string(kMaxWeight) + ", got '" + node.Scalar() + "'");
    }
    *out = static_cast<uint32_t>(v);
    return true;
  }

  bool string(const YAML::Node& key, const YAML::Node& node, const char* what, std::string* out) {
    if (!node.IsScalar())
      return fail(node.IsNull() ? key : node, std::string(what) + ": expected a string");
    *out = node.Scalar();
    return true;
  }

  bool metadata(const YAML::Node& key, const YAML::Node& node,
                std::vector<std::pair<std::string, std::string>>* out) {
    if (!node.IsMap()) {
      return fail(node.IsNull() ? key : node, "metadata: expected a map of strings");
    }
    bool ok = true;
    std::set<std::string> keys;
    for (const auto& kv : node) {
      std::string k = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      if (k.empty()) {
        ok = fail(kv.first, "metadata: keys must be non-empty strings");
      } else if (!keys.insert(k).second) {
        ok = fail(kv.first, "metadata: key '" + k + "' given twice");
      } else if (!kv.second.IsScalar()) {
        ok = fail(kv.second.IsNull() ? kv.first : kv.second,
                  "metadata: value of '" + k + "' must be a string");
      } else {
        out->emplace_back(k, kv.second.Scalar());
      }
    }
    return ok;
  }

  // Records an error at `node` (its position when it has one); returns false for `ok = fail()`.
  bool fail(const YAML::Node& node, std::string message) {
    const YAML::Mark mark = node.Mark();
    bool known = !mark.is_null() && mark.line >= 0;
    out_->errors.push_back({known ? static_cast<uint32_t>(mark.line + 1) : 0,
                            known ? static_cast<uint32_t>(mark.column + 1) : 0,
                            std::move(message)});
    return false;
  }

  ParsedEndpoints* out_;
};

}  // namespace

std::string FileError::format(const std::string& file) const {
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

size_t ParsedEndpoints::endpointCount() const {
  size_t n = 0;
  for (const sdk::DiscoveredCluster& c : clusters) n += c.endpoints.size();
  return n;
}

ParsedEndpoints parseEndpoints(std::string_view text) {
  ParsedEndpoints out;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    bool known = !e.mark.is_null() && e.mark.line >= 0;
    out.errors.push_back({known ? static_cast<uint32_t>(e.mark.line + 1) : 0,
                          known ? static_cast<uint32_t>(e.mark.column + 1) : 0,
                          "YAML syntax error: " + e.msg});
    return out;
  }
  try {
    Parser(&out).document(root);
  } catch (const std::exception& e) {  // yaml-cpp conversions; not expected after the checks
    out.errors.push_back({0, 0, std::string("unexpected error: ") + e.what()});
  }
  return out;
}

}  // namespace sluice::discovery
