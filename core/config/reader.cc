#include "core/config/reader.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>

#include "core/config/address.h"

namespace sluice::config::internal {
namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// True for a scalar written plain (unquoted, untagged) or with the explicit core-schema tag
// `!!<type>`; a quoted "8080" is a string in YAML, whatever it looks like.
bool isPlainOr(const YAML::Node& node, std::string_view type) {
  return node.IsScalar() && (node.Tag() == "?" || node.Tag() == cat("tag:yaml.org,2002:", type));
}

std::string join(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view word : words) {
    if (!out.empty()) out += ", ";
    out += word;
  }
  return out;
}

}  // namespace

Context::Context(std::string file, std::string base_dir)
    : file_(std::move(file)), base_dir_(std::move(base_dir)) {}

Mark Context::markOf(const YAML::Node& node) const {
  Mark mark;
  mark.file = file_;
  if (!node.IsDefined()) return mark;
  YAML::Mark m = node.Mark();
  if (m.line >= 0 && m.column >= 0) {
    mark.line = static_cast<uint32_t>(m.line) + 1;
    mark.column = static_cast<uint32_t>(m.column) + 1;
  }
  return mark;
}

void Context::error(const Mark& mark, const std::string& reason) {
  problems_.emplace_back(mark, reason);
}

void Context::appendTo(std::vector<std::string>* errors) const {
  std::vector<const std::pair<Mark, std::string>*> order;
  for (const auto& problem : problems_) order.push_back(&problem);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return std::make_pair(a->first.line, a->first.column) <
           std::make_pair(b->first.line, b->first.column);
  });
  for (const auto* problem : order) {
    errors->push_back(cat(problem->first.str(), ": ", problem->second));
  }
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return cat("'", node.Scalar(), "'");
    default:
      return "nothing";
  }
}

bool forEachField(const Field& node, std::string_view what,
                  const std::vector<std::string_view>& allowed, Context& ctx,
                  const std::function<void(const Field&)>& fn) {
  if (node.value.IsNull()) return true;
  std::string where = node.label.empty() ? "" : cat(node.label, ": ");
  if (!node.value.IsMap()) {
    ctx.error(node.mark, cat(where, "expected a mapping (", what, "), got ", describe(node.value)));
    return false;
  }
  std::set<std::string> seen;
  for (const auto& entry : node.value) {  // `entry` is a value; it->first would dangle
    const YAML::Node& key = entry.first;
    Mark key_mark = ctx.markOf(key);
    if (!key.IsScalar()) {
      ctx.error(key_mark, cat(where, "keys of a ", what, " must be strings, got ", describe(key)));
      continue;
    }
    const std::string& name = key.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      ctx.error(key_mark, cat(where, "unknown key '", name, "' in ", what,
                              " (allowed: ", join(allowed), ")"));
      continue;
    }
    if (!seen.insert(name).second) {
      ctx.error(key_mark, cat(where, "duplicate key '", name, "' in ", what));
      continue;
    }
    Field field{node.label.empty() ? name : cat(node.label, ".", name), name, entry.second,
                key_mark};
    if (!entry.second.IsNull()) field.mark = ctx.markOf(entry.second);
    fn(field);
  }
  return true;
}

void requireFields(const Field& node, const std::vector<std::string_view>& required, Context& ctx) {
  if (!node.value.IsMap()) return;
  for (std::string_view key : required) {
    bool present = false;
    for (const auto& entry : node.value) {
      present = present || (entry.first.IsScalar() && entry.first.Scalar() == key);
    }
    if (!present) {
      ctx.error(node.mark, cat(node.label.empty() ? "" : cat(node.label, ": "),
                               "missing required key '", key, "'"));
    }
  }
}

bool forEachItem(const Field& list, Context& ctx, const std::function<void(const Field&)>& fn) {
  if (list.value.IsNull()) return true;
  if (!list.value.IsSequence()) {
    ctx.error(list.mark, cat(list.label, ": expected a list, got ", describe(list.value)));
    return false;
  }
  size_t index = 0;
  for (const YAML::Node& item : list.value) {
    Field field{cat(list.label, "[", index++, "]"), "", item, ctx.markOf(item)};
    if (field.mark.line == 0) field.mark = list.mark;
    fn(field);
  }
  return true;
}

bool readString(const Field& field, Context& ctx, std::string* out) {
  if (!field.value.IsScalar()) {
    ctx.error(field.mark, cat(field.label, ": expected a string, got ", describe(field.value)));
    return false;
  }
  *out = field.value.Scalar();
  return true;
}

bool readName(const Field& field, Context& ctx, std::string* out) {
  std::string name;
  if (!readString(field, ctx, &name)) return false;
  if (name.empty() || !std::all_of(name.begin(), name.end(), isNameChar)) {
    ctx.error(field.mark, cat(field.label, ": invalid name '", name,
                              "' (expected letters, digits, '.', '_' or '-')"));
    return false;
  }
  *out = std::move(name);
  return true;
}

bool parseDecimal(const YAML::Node& node, uint64_t* out) {
  if (!isPlainOr(node, "int") || node.Scalar().empty()) return false;
  uint64_t value = 0;
  for (char c : node.Scalar()) {
    if (c < '0' || c > '9') return false;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

std::string resolvePath(const Context& ctx, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(ctx.baseDir()) / p;
  return p.lexically_normal().string();
}

bool readUint64(const Field& field, uint64_t min, uint64_t max, Context& ctx, uint64_t* out) {
  uint64_t value = 0;
  if (!parseDecimal(field.value, &value) || value < min || value > max) {
    ctx.error(field.mark, cat(field.label, ": expected an integer ", min, "..", max, ", got ",
                              describe(field.value)));
    return false;
  }
  *out = value;
  return true;
}

bool readUint32(const Field& field, uint32_t min, uint32_t max, Context& ctx, uint32_t* out) {
  uint64_t value = 0;
  if (!readUint64(field, min, max, ctx, &value)) return false;
  *out = static_cast<uint32_t>(value);
  return true;
}

bool readTimeoutMs(const Field& field, Context& ctx, uint32_t* out) {
  uint64_t value = 0;
  if (!parseDecimal(field.value, &value) || value < 1 ||
      value > std::numeric_limits<uint32_t>::max()) {
    ctx.error(field.mark,
              cat(field.label, ": expected a timeout in milliseconds (an integer 1..",
                  std::numeric_limits<uint32_t>::max(), "), got ", describe(field.value)));
    return false;
  }
  *out = static_cast<uint32_t>(value);
  return true;
}

bool readBool(const Field& field, Context& ctx, bool* out) {
  if (isPlainOr(field.value, "bool")) {
    const std::string& s = field.value.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") {
      *out = true;
      return true;
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      *out = false;
      return true;
    }
  }
  ctx.error(field.mark, cat(field.label, ": expected true or false, got ", describe(field.value)));
  return false;
}

bool readAddress(const Field& field, Context& ctx, std::string* out) {
  std::string address;
  if (!readString(field, ctx, &address)) return false;
  std::string reason;
  if (!splitHostPort(address, nullptr, nullptr, &reason)) {
    ctx.error(field.mark, cat(field.label, ": invalid address '", address, "': ", reason));
    return false;
  }
  *out = std::move(address);
  return true;
}

}  // namespace sluice::config::internal
