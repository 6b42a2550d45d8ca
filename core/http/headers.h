// An HTTP header map that keeps fields in wire order (RFC 9110 §5.3: order of same-named fields
// matters), with case-insensitive lookup (RFC 9110 §5.1). Small and linear: a request carries a
// few dozen fields, where a vector beats any hash map.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::http {

struct HeaderField {
  std::string name;
  std::string value;
};

class HeaderMap {
 public:
  // Appends a field (no validation: see isToken/isFieldValue).
  void add(std::string_view name, std::string_view value);
  // Replaces every field called `name` by one field (appended when absent).
  void set(std::string_view name, std::string_view value);
  // Removes every field called `name`; returns how many.
  size_t remove(std::string_view name);
  // The index-th value of `name`, or nullptr.
  const std::string* get(std::string_view name, size_t index = 0) const;
  // How many fields are called `name`.
  size_t count(std::string_view name) const;
  bool has(std::string_view name) const { return get(name) != nullptr; }
  // True when some comma-separated element of any `name` field equals `token`
  // (case-insensitive), e.g. hasToken("Connection", "close").
  bool hasToken(std::string_view name, std::string_view token) const;

  const std::vector<HeaderField>& fields() const { return fields_; }
  std::vector<HeaderField>& mutableFields() { return fields_; }
  size_t size() const { return fields_.size(); }
  void clear() { fields_.clear(); }

 private:
  std::vector<HeaderField> fields_;
};

// Case-insensitive ASCII equality.
bool equalsIgnoreCase(std::string_view a, std::string_view b);
// RFC 9110 §5.6.2 token: one or more tchar.
bool isToken(std::string_view s);
// RFC 9110 §5.5 field-value: no CR, LF or NUL (other CTLs except HTAB also refused), and no
// leading/trailing whitespace.
bool isFieldValue(std::string_view s);
// Calls fn(element) for each comma-separated element of `value`, trimmed of OWS; empty elements
// are skipped (RFC 9110 §5.6.1).
template <typename Fn>
void forEachListElement(std::string_view value, Fn fn) {
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t comma = value.find(',', pos);
    if (comma == std::string_view::npos) comma = value.size();
    std::string_view el = value.substr(pos, comma - pos);
    while (!el.empty() && (el.front() == ' ' || el.front() == '\t')) el.remove_prefix(1);
    while (!el.empty() && (el.back() == ' ' || el.back() == '\t')) el.remove_suffix(1);
    if (!el.empty()) fn(el);
    pos = comma + 1;
  }
}

// True for the fixed hop-by-hop field names (RFC 9110 §7.6.1): Connection, Keep-Alive,
// Proxy-Connection, TE, Transfer-Encoding, Upgrade, Trailer (any case).
bool isHopByHop(std::string_view name);

// Removes hop-by-hop fields (RFC 9110 §7.6.1): Connection, Keep-Alive, Proxy-Connection, TE,
// Transfer-Encoding, Upgrade, Trailer, plus every field named in Connection — except Host,
// Content-Length, Transfer-Encoding framing (the codec re-frames) and Authorization, which a
// client cannot make a proxy drop.
void stripHopByHop(HeaderMap& headers);

}  // namespace sluice::http
