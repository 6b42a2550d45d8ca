// sluice C++ SDK — typed, validating access to a plugin's YAML config subtree.
//
// A plugin's config class takes a `const ConfigNode&` in its constructor, reads what it needs with
// the typed getters below and throws ConfigError (directly or through them) to refuse. The SDK's
// config_create trampoline catches it and reports "<file>:<line>:<col>: plugin <name>: <message>".
//
// Threads: main thread only (config_create). Lifetime: a ConfigNode is a borrowed view that is
// valid only during config_create; copy out (std::string, numbers) everything you keep.
// Header-only; includes only core/api/*.h and std headers.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/api/common.h"

namespace sluice::sdk {

// A refused config value. `line`/`column` are 1-based (0 = unknown: the host then points at the
// plugin's config block).
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& message, uint32_t line, uint32_t column)
      : std::runtime_error(message), line_(line), column_(column) {}
  uint32_t line() const { return line_; }
  uint32_t column() const { return column_; }

 private:
  uint32_t line_;
  uint32_t column_;
};

// A borrowed view of one node of the config tree (see sluice_config_api). Cheap to copy.
class ConfigNode {
 public:
  ConfigNode(const sluice_config_api* api, const sluice_config_node* node)
      : api_(api), node_(node) {}

  sluice_node_type type() const { return api_->type(node_); }
  bool isNull() const { return type() == SLUICE_NODE_NULL; }
  bool isScalar() const { return type() == SLUICE_NODE_SCALAR; }
  bool isSequence() const { return type() == SLUICE_NODE_SEQUENCE; }
  bool isMap() const { return type() == SLUICE_NODE_MAP; }
  // 1-based position in the config file (0 when unknown, e.g. an absent key).
  uint32_t line() const { return api_->line(node_); }
  uint32_t column() const { return api_->column(node_); }

  // Children of a map or sequence; 0 for scalars and null.
  size_t size() const { return api_->size(node_); }
  // Map lookup; a null node when the key is absent or this is not a map.
  ConfigNode operator[](const char* key) const { return {api_, api_->get(node_, key)}; }
  bool has(const char* key) const { return !(*this)[key].isNull(); }
  // i-th element of a sequence / i-th value of a map, and i-th key of a map (0 <= i < size()).
  ConfigNode at(size_t i) const { return {api_, api_->at(node_, i)}; }
  std::string_view keyAt(size_t i) const { return view(api_->key_at(node_, i)); }
  // Scalar text as written ("" for non-scalars).
  std::string_view scalar() const { return view(api_->scalar(node_)); }

  // ABI 1.2. `path` resolved like the host's own paths (relative to the config file's
  // directory). Throws ConfigError at this node when empty or too long.
  std::string resolvePath(std::string_view path) const {
    char out[4096];
    size_t n = api_->resolve_path(node_, {path.data(), path.size()}, out, sizeof(out));
    if (n == 0) fail("cannot resolve path '" + std::string(path) + "'");
    return std::string(out, n);
  }
  // ABI 1.2. A reload rebuilds this config instance when the file's content changed (call it
  // for every file config_create reads). Throws ConfigError at this node when unreadable.
  void dependsOnFile(const std::string& resolved_path) const {
    if (api_->depends_on_file(node_, {resolved_path.data(), resolved_path.size()}) != 0) {
      fail("cannot read '" + resolved_path + "'");
    }
  }

  // Throws ConfigError pointing at this node.
  [[noreturn]] void fail(const std::string& message) const {
    throw ConfigError(message, line(), column());
  }

  // Null or a map, else refuses. A plugin with no `config:` block gets a null node.
  void requireMapOrNull() const {
    if (!isNull() && !isMap()) fail("expected a map");
  }
  // requireMapOrNull(), and refuses the first key not in `allowed` ("unknown key 'x' (expected
  // one of: a, b)"), pointing at that key's value.
  void requireOnlyKeys(std::initializer_list<std::string_view> allowed) const {
    requireMapOrNull();
    for (size_t i = 0; i < size(); ++i) {
      std::string_view key = keyAt(i);
      bool known = false;
      for (std::string_view a : allowed) known = known || a == key;
      if (known) continue;
      std::string expected;
      for (std::string_view a : allowed)
        expected += (expected.empty() ? "" : ", ") + std::string(a);
      ConfigNode value = at(i);
      std::string msg =
          "unknown key '" + std::string(key) + "'" +
          (expected.empty() ? " (no keys allowed)" : " (expected one of: " + expected + ")");
      throw ConfigError(msg, value.line() != 0 ? value.line() : line(),
                        value.line() != 0 ? value.column() : column());
    }
  }

  // Typed conversions of this node; each throws ConfigError at this node on a wrong type.
  std::string asString() const {
    if (!isScalar()) fail("expected a string");
    return std::string(scalar());
  }
  bool asBool() const {
    std::string s = isScalar() ? std::string(scalar()) : std::string();
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
    fail("expected true or false");
  }
  int64_t asInt(int64_t min, int64_t max) const {
    std::string s = isScalar() ? std::string(scalar()) : std::string();
    char* end = nullptr;
    errno = 0;
    long long v = s.empty() ? 0 : std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || end == nullptr || *end != '\0' || errno != 0 || v < min || v > max) {
      fail("expected an integer from " + std::to_string(min) + " to " + std::to_string(max));
    }
    return v;
  }
  double asDouble() const {
    std::string s = isScalar() ? std::string(scalar()) : std::string();
    char* end = nullptr;
    double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
    if (s.empty() || end == nullptr || *end != '\0') fail("expected a number");
    return v;
  }
  // A sequence of scalars (a single scalar reads as a one-element list).
  std::vector<std::string> asStringList() const {
    if (isScalar()) return {asString()};
    if (!isSequence()) fail("expected a list of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < size(); ++i) out.push_back(at(i).asString());
    return out;
  }
  // A map of scalar values, in file order.
  std::vector<std::pair<std::string, std::string>> asStringMap() const {
    if (!isMap()) fail("expected a map of strings");
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < size(); ++i) out.emplace_back(std::string(keyAt(i)), at(i).asString());
    return out;
  }

  // Getters on a map: `def` when the key is absent or null, else the typed value (or a throw).
  std::string getString(const char* key, std::string def) const {
    ConfigNode n = (*this)[key];
    return n.isNull() ? std::move(def) : n.asString();
  }
  bool getBool(const char* key, bool def) const {
    ConfigNode n = (*this)[key];
    return n.isNull() ? def : n.asBool();
  }
  int64_t getInt(const char* key, int64_t def, int64_t min, int64_t max) const {
    ConfigNode n = (*this)[key];
    return n.isNull() ? def : n.asInt(min, max);
  }
  double getDouble(const char* key, double def) const {
    ConfigNode n = (*this)[key];
    return n.isNull() ? def : n.asDouble();
  }

  const sluice_config_api* api() const { return api_; }
  const sluice_config_node* raw() const { return node_; }

 private:
  static std::string_view view(sluice_str s) {
    return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
  }
  const sluice_config_api* api_;
  const sluice_config_node* node_;
};

}  // namespace sluice::sdk
