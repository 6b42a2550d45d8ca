#include "filters/param_validation/form.h"

namespace sluice::filters::pv {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string_view queryOf(std::string_view target) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view query = target.substr(q + 1);
  size_t hash = query.find('#');
  return hash == std::string_view::npos ? query : query.substr(0, hash);
}

std::string formDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < s.size() && hexValue(s[i + 1]) >= 0 && hexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hexValue(s[i + 1]) * 16 + hexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

QueryParams parseQuery(std::string_view query) {
  QueryParams out;
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view piece = query.substr(pos, amp - pos);
    pos = amp + 1;
    if (piece.empty()) continue;
    size_t eq = piece.find('=');
    std::string_view name = eq == std::string_view::npos ? piece : piece.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1);
    out.emplace_back(formDecode(name), formDecode(value));
  }
  return out;
}

}  // namespace sluice::filters::pv
