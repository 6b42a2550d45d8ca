#include "core/proxy/local_reply.h"

#include <cstdio>

#include "core/http/serialize.h"

namespace sluice::proxy {

std::string jsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string errorBody(uint32_t status, std::string_view detail) {
  std::string body = "{\"status\":" + std::to_string(status) + ",\"error\":\"" +
                     jsonEscape(http::reasonPhrase(status)) + "\"";
  if (!detail.empty()) body += ",\"detail\":\"" + jsonEscape(detail) + "\"";
  body += "}\n";
  return body;
}

}  // namespace sluice::proxy
