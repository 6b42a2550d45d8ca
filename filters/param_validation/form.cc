#include "filters/param_validation/form.h"

#include "filters/common/form.h"

namespace sluice::filters::pv {

std::string_view queryOf(std::string_view target) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view query = target.substr(q + 1);
  size_t hash = query.find('#');
  return hash == std::string_view::npos ? query : query.substr(0, hash);
}

std::string formDecode(std::string_view s) {
  return *common::formDecode(s, common::BadEscape::kKeep);
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
