#include "core/accesslog/escape.h"

#include <cstdint>

namespace sluice::accesslog {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence at s[i] (2..4), or 0 when the bytes there are not one.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t len;
  uint32_t min;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    min = 0x80;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    min = 0x800;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    min = 0x10000;
    cp = c & 0x07;
  } else {
    return 0;  // ASCII is handled by the caller; 0x80..0xc1 and 0xf5.. never start a sequence
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = byte(i + k);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

}  // namespace

void appendJsonString(std::string_view value, std::string* out) {
  out->push_back('"');
  appendJsonEscaped(value, out);
  out->push_back('"');
}

void appendJsonEscaped(std::string_view value, std::string* out) {
  size_t i = 0;
  while (i < value.size()) {
    // Copy the longest run of bytes that need no escaping in one append.
    size_t run = i;
    while (run < value.size()) {
      auto c = static_cast<unsigned char>(value[run]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) break;
      ++run;
    }
    out->append(value.data() + i, run - i);
    i = run;
    if (i == value.size()) break;
    auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x80) {
      size_t len = utf8SequenceLength(value, i);
      if (len == 0) {
        out->append("\\ufffd");
        ++i;
      } else {
        out->append(value.data() + i, len);
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default: {  // other controls and DEL
        char buf[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out->append(buf, sizeof(buf));
      }
    }
    ++i;
  }
}

void appendTextValue(std::string_view value, std::string* out) {
  if (value.empty()) {
    out->push_back('-');
    return;
  }
  size_t i = 0;
  while (i < value.size()) {
    size_t run = i;  // the longest run that needs no escaping goes in one append
    while (run < value.size()) {
      auto c = static_cast<unsigned char>(value[run]);
      if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') break;
      ++run;
    }
    out->append(value.data() + i, run - i);
    if (run == value.size()) break;
    auto c = static_cast<unsigned char>(value[run]);
    char buf[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    out->append(buf, sizeof(buf));
    i = run + 1;
  }
}

}  // namespace sluice::accesslog
