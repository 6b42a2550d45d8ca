#include "discovery/zookeeper/json.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace sluice::zookeeper {

bool parseJsonObject(const std::string& text, YAML::Node* out, std::string* error) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    *out = YAML::Node(YAML::NodeType::Map);
    return true;
  }
  try {
    YAML::Node node = YAML::Load(text);
    if (node.IsNull()) {
      *out = YAML::Node(YAML::NodeType::Map);
      return true;
    }
    if (!node.IsMap()) {
      *error = "expected a JSON object";
      return false;
    }
    *out = node;
    return true;
  } catch (const std::exception& e) {
    *error = std::string("bad JSON: ") + e.what();
    return false;
  }
}

bool readInt(const YAML::Node& node, int64_t min, int64_t max, int64_t* out) {
  if (!node.IsDefined() || !node.IsScalar()) return false;
  const std::string& s = node.Scalar();
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || errno != 0 || v < min || v > max) return false;
  *out = v;
  return true;
}

bool readStringMap(const YAML::Node& node, std::vector<std::pair<std::string, std::string>>* out,
                   std::string* error) {
  out->clear();
  if (!node.IsDefined() || node.IsNull()) return true;
  if (!node.IsMap()) {
    *error = "expected an object of strings";
    return false;
  }
  for (const auto& kv : node) {
    if (!kv.first.IsScalar() || !(kv.second.IsScalar() || kv.second.IsNull())) {
      *error = "expected string values";
      return false;
    }
    out->emplace_back(kv.first.Scalar(), kv.second.IsNull() ? "" : kv.second.Scalar());
  }
  return true;
}

std::string jsonQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "\"";
}

}  // namespace sluice::zookeeper
