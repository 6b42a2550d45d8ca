#include "filters/common/form.h"

namespace sluice::filters::common {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> formDecode(std::string_view in, BadEscape bad) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+') {
      out.push_back(' ');
      continue;
    }
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    int hi = i + 1 < in.size() ? hexValue(in[i + 1]) : -1;
    int lo = i + 2 < in.size() ? hexValue(in[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      if (bad == BadEscape::kRefuse) return std::nullopt;
      out.push_back(c);
      continue;
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace sluice::filters::common
