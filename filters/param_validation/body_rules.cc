#include "filters/param_validation/body_rules.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/api/sdk/filter.h"

namespace sluice::filters::pv {
namespace {

using Json = nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

const char* typeName(FieldRule::Type t) {
  switch (t) {
    case FieldRule::Type::kAny:
      return "any";
    case FieldRule::Type::kString:
      return "a string";
    case FieldRule::Type::kInteger:
      return "an integer";
    case FieldRule::Type::kNumber:
      return "a number";
    case FieldRule::Type::kBoolean:
      return "a boolean";
    case FieldRule::Type::kObject:
      return "an object";
    case FieldRule::Type::kArray:
      return "an array";
    case FieldRule::Type::kNull:
      return "null";
  }
  return "?";
}

bool isInteger(const Json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool hasType(const Json& v, FieldRule::Type t) {
  switch (t) {
    case FieldRule::Type::kAny:
      return true;
    case FieldRule::Type::kString:
      return v.is_string();
    case FieldRule::Type::kInteger:
      return isInteger(v);
    case FieldRule::Type::kNumber:
      return v.is_number();
    case FieldRule::Type::kBoolean:
      return v.is_boolean();
    case FieldRule::Type::kObject:
      return v.is_object();
    case FieldRule::Type::kArray:
      return v.is_array();
    case FieldRule::Type::kNull:
      return v.is_null();
  }
  return false;
}

uint64_t codePoints(const std::string& s) {
  uint64_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

// Builds the DOM through nlohmann's SAX interface, so that nesting deeper than a limit and
// duplicate object keys stop the parse (the stock DOM parser keeps the last duplicate silently).
class Builder {
 public:
  explicit Builder(uint32_t max_depth) : max_depth_(max_depth) {}

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
  bool string(std::string& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return fail("binary values are not JSON"); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool key(std::string& k) {
    if (stack_.back()->contains(k)) return fail("duplicate key '" + k + "'");
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    return fail("not valid JSON (at byte " + std::to_string(position) + ")");
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  // Places `v` where the parser is and returns where it went.
  Json* place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    Json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }
  bool put(Json v) {
    place(std::move(v));
    return true;
  }
  bool open(Json container) {
    if (stack_.size() + 1 > max_depth_) {
      return fail("nested deeper than " + std::to_string(max_depth_) + " levels");
    }
    // Pointers stay valid: a container on the stack gets no new element while a child is open.
    stack_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  uint32_t max_depth_;
  Json root_;
  std::vector<Json*> stack_;
  std::string key_;
  std::string error_;
};

const Json* lookup(const Json& root, const std::vector<std::string>& path) {
  const Json* at = &root;
  for (const std::string& k : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(k);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::optional<std::string> checkField(const FieldRule& r, const Json& v) {
  if (!hasType(v, r.type)) return std::string("must be ") + typeName(r.type);
  if (v.is_number()) {
    double d = v.get<double>();
    if (r.min && d < *r.min) return "must be at least " + formatNumber(*r.min);
    if (r.max && d > *r.max) return "must be at most " + formatNumber(*r.max);
    if (!r.enum_numbers.empty()) {
      bool found = false;
      std::string list;
      for (double e : r.enum_numbers) {
        found = found || e == d;
        list += (list.empty() ? "" : ", ") + formatNumber(e);
      }
      if (!found) return "must be one of: " + list;
    }
  }
  uint64_t length = 0;
  const char* unit = nullptr;
  if (v.is_string()) {
    length = codePoints(v.get_ref<const std::string&>());
    unit = " characters";
  } else if (v.is_array()) {
    length = v.size();
    unit = " items";
  }
  if (unit != nullptr) {
    if (r.max_length && length > *r.max_length) {
      return "must be at most " + std::to_string(*r.max_length) + unit + " long";
    }
    if (r.min_length && length < *r.min_length) {
      return "must be at least " + std::to_string(*r.min_length) + unit + " long";
    }
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (!r.enum_strings.empty()) {
      bool found = false;
      std::string list;
      for (const std::string& e : r.enum_strings) {
        found = found || e == s;
        list += (list.empty() ? "" : ", ") + e;
      }
      if (!found) return "must be one of: " + list;
    }
    if (r.pattern) {
      if (s.size() > kMaxPatternInput) {
        return "must be at most " + std::to_string(kMaxPatternInput) + " bytes long";
      }
      if (!r.pattern->matches(s)) return "must match the pattern " + r.pattern->source();
    }
  }
  return std::nullopt;
}

}  // namespace

FieldRule::FieldRule(std::string field_name, const sdk::ConfigNode& node, bool has_rule)
    : name(std::move(field_name)) {
  size_t pos = 0;
  while (pos <= name.size()) {
    size_t dot = name.find('.', pos);
    if (dot == std::string::npos) dot = name.size();
    path.push_back(name.substr(pos, dot - pos));
    pos = dot + 1;
  }
  for (const std::string& p : path) {
    if (p.empty()) node.fail("field '" + name + "': empty name between dots");
  }
  if (!has_rule) return;
  node.requireOnlyKeys(
      {"required", "type", "min", "max", "min_length", "max_length", "enum", "pattern"});
  required = node.getBool("required", false);
  if (node.has("type")) {
    std::string t = node["type"].asString();
    static const std::pair<const char*, Type> kTypes[] = {
        {"string", Type::kString},   {"integer", Type::kInteger}, {"number", Type::kNumber},
        {"boolean", Type::kBoolean}, {"object", Type::kObject},   {"array", Type::kArray},
        {"null", Type::kNull}};
    bool known = false;
    for (const auto& [n, v] : kTypes) {
      if (t == n) {
        type = v;
        known = true;
      }
    }
    if (!known) {
      node["type"].fail("unknown type '" + t +
                        "' (expected string, integer, number, boolean, object, array or null)");
    }
  }
  bool numeric = type == Type::kInteger || type == Type::kNumber;
  for (const char* key : {"min", "max"}) {
    if (node.has(key) && !numeric) {
      node[key].fail(std::string(key) + " applies to types integer and number");
    }
  }
  for (const char* key : {"min_length", "max_length"}) {
    if (node.has(key) && type != Type::kString && type != Type::kArray) {
      node[key].fail(std::string(key) + " applies to types string and array");
    }
  }
  min = readBound(node, "min", false);
  max = readBound(node, "max", false);
  min_length = readLength(node, "min_length");
  max_length = readLength(node, "max_length");
  checkOrder(node, min, max, min_length, max_length);
  if (node.has("enum")) {
    sdk::ConfigNode e = node["enum"];
    std::vector<std::string> values = e.asStringList();
    if (values.empty()) e.fail("enum needs at least one value");
    if (type == Type::kString) {
      enum_strings = values;
    } else if (numeric) {
      for (size_t i = 0; i < values.size(); ++i) {
        std::optional<double> d = parseNumber(values[i]);
        if (!d || (type == Type::kInteger && std::floor(*d) != *d)) {
          (e.isSequence() ? e.at(i) : e).fail("'" + values[i] + "' is not " + typeName(type));
        }
        enum_numbers.push_back(*d);
      }
    } else {
      e.fail("enum applies to types string, integer and number");
    }
  }
  if (node.has("pattern")) {
    if (type != Type::kString) node["pattern"].fail("pattern applies to type string");
    std::string why;
    pattern = Pattern::compile(node["pattern"].asString(), &why);
    if (!pattern) node["pattern"].fail(why);
  }
}

BodyRules::BodyRules(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"max_bytes", "max_depth", "methods", "required", "fields"});
  max_bytes = static_cast<uint64_t>(node.getInt("max_bytes", 1 << 20, 1, int64_t{1} << 30));
  max_depth = static_cast<uint32_t>(node.getInt("max_depth", 32, 1, 1000));
  if (node.has("methods")) {
    methods = node["methods"].asStringList();
    for (size_t i = 0; i < methods.size(); ++i) {
      if (!sdk::isHeaderName(methods[i])) {
        sdk::ConfigNode m = node["methods"];
        (m.isSequence() ? m.at(i) : m).fail("'" + methods[i] + "' is not an HTTP method");
      }
    }
  }
  sdk::ConfigNode f = node["fields"];
  if (!f.isNull()) {
    if (!f.isMap()) f.fail("expected a map of field names to rules");
    for (size_t i = 0; i < f.size(); ++i) {
      sdk::ConfigNode rule = f.at(i);
      if (!rule.isMap()) rule.fail("expected a map (type, min, max, ...)");
      fields.emplace_back(std::string(f.keyAt(i)), rule, true);
    }
  }
  sdk::ConfigNode req = node["required"];
  if (!req.isNull()) {
    std::vector<std::string> names = req.asStringList();
    for (size_t i = 0; i < names.size(); ++i) {
      bool found = false;
      for (FieldRule& r : fields) {
        if (r.name == names[i]) {
          r.required = true;
          found = true;
        }
      }
      if (!found) {
        sdk::ConfigNode at = req.isSequence() ? req.at(i) : req;
        fields.emplace_back(names[i], at, false);
        fields.back().required = true;
      }
    }
  }
}

bool BodyRules::appliesTo(std::string_view method) const {
  for (const std::string& m : methods) {
    if (m == method) return true;
  }
  return false;
}

void BodyRules::validate(std::string_view body, std::vector<Violation>* out) const {
  Builder builder(max_depth);
  bool ok = Json::sax_parse(body, &builder, Json::input_format_t::json, true);
  if (!ok || !builder.error().empty()) {
    out->push_back({"body", "", builder.error().empty() ? "not valid JSON" : builder.error()});
    return;
  }
  const Json& root = builder.root();
  if (fields.empty()) return;
  if (!root.is_object()) {
    out->push_back({"body", "", "must be a JSON object"});
    return;
  }
  for (const FieldRule& r : fields) {
    const Json* v = lookup(root, r.path);
    if (v == nullptr) {
      if (r.required) out->push_back({"body", r.name, "is required"});
      continue;
    }
    if (std::optional<std::string> why = checkField(r, *v)) {
      out->push_back({"body", r.name, std::move(*why)});
    }
  }
}

bool isJsonMediaType(std::string_view content_type) {
  std::string t = lower(content_type.substr(0, content_type.find(';')));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
  size_t start = t.find_first_not_of(" \t");
  if (start == std::string::npos) return false;
  t = t.substr(start);
  if (t == "application/json") return true;
  return t.rfind("application/", 0) == 0 && t.size() > 17 &&
         t.compare(t.size() - 5, 5, "+json") == 0 && t.find('/', 12) == std::string::npos;
}

}  // namespace sluice::filters::pv
