#include "core/accesslog/format.h"

#include <time.h>

#include <array>
#include <charconv>

#include "core/accesslog/escape.h"

namespace sluice::accesslog {
namespace {

constexpr std::string_view kFieldNames[] = {
    "time",      "request_id",    "client_address",     "tls_version",   "sni",
    "method",    "path",          "protocol",           "status",        "bytes_in",
    "bytes_out", "upstream_host", "upstream_time_ms",   "total_time_ms", "retries",
    "listener",  "cluster",       "local_reply_filter", "response_flags"};
static_assert(sizeof(kFieldNames) / sizeof(kFieldNames[0]) == static_cast<size_t>(Field::kCount));

void appendUint(uint64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

// Microseconds as milliseconds with three decimals: 1234 → "1.234".
void appendMs(uint64_t us, std::string* out) {
  appendUint(us / 1000, out);
  uint32_t frac = static_cast<uint32_t>(us % 1000);
  char buf[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10)};
  out->append(buf, sizeof(buf));
}

// "2026-01-31T12:34:56.789Z". The part up to the seconds is cached per thread: requests in the
// same second (nearly all of them, under load) skip gmtime_r and strftime.
void appendTime(int64_t unix_us, std::string* out) {
  thread_local int64_t cached_second = INT64_MIN;
  thread_local char cached[24];
  thread_local size_t cached_len = 0;
  int64_t second = unix_us >= 0 ? unix_us / 1000000 : (unix_us - 999999) / 1000000;
  if (second != cached_second) {
    time_t t = static_cast<time_t>(second);
    tm utc{};
    gmtime_r(&t, &utc);
    cached_len = strftime(cached, sizeof(cached), "%Y-%m-%dT%H:%M:%S", &utc);
    cached_second = second;
  }
  out->append(cached, cached_len);
  uint32_t ms = static_cast<uint32_t>((unix_us - second * 1000000) / 1000);
  char buf[5] = {'.', static_cast<char>('0' + ms / 100), static_cast<char>('0' + ms / 10 % 10),
                 static_cast<char>('0' + ms % 10), 'Z'};
  out->append(buf, sizeof(buf));
}

// The flags as "a,b,c" (nothing when none is set).
void appendFlags(uint32_t flags, std::string* out) {
  bool first = true;
  for (uint32_t bit = 0; bit < proxy::kResponseFlagCount; ++bit) {
    if ((flags & (1u << bit)) == 0) continue;
    if (!first) out->push_back(',');
    first = false;
    out->append(proxy::responseFlagName(bit));
  }
}

// The string value of a string-valued field; `is_string` false for numbers and time.
std::string_view stringField(const proxy::RequestInfo& info, Field f, bool* is_string) {
  *is_string = true;
  switch (f) {
    case Field::kRequestId:
      return info.request_id;
    case Field::kClientAddress:
      return info.client_address;
    case Field::kTlsVersion:
      return info.tls_version;
    case Field::kSni:
      return info.sni;
    case Field::kMethod:
      return info.method;
    case Field::kPath:
      return info.path;
    case Field::kProtocol:
      return info.protocol;
    case Field::kUpstreamHost:
      return info.upstream_host;
    case Field::kListener:
      return info.listener;
    case Field::kCluster:
      return info.cluster;
    case Field::kLocalReplyFilter:
      return info.local_reply_filter;
    default:
      *is_string = false;
      return {};
  }
}

// Appends a non-string field. `json`: null for an absent upstream time, else "-".
void appendOther(const proxy::RequestInfo& info, Field f, bool json, std::string* out) {
  switch (f) {
    case Field::kTime:
      if (json) out->push_back('"');
      appendTime(info.start_unix_us, out);
      if (json) out->push_back('"');
      return;
    case Field::kStatus:
      appendUint(info.status, out);
      return;
    case Field::kBytesIn:
      appendUint(info.bytes_in, out);
      return;
    case Field::kBytesOut:
      appendUint(info.bytes_out, out);
      return;
    case Field::kUpstreamTimeMs:
      if (info.upstream_us < 0) {
        out->append(json ? "null" : "-");
      } else {
        appendMs(static_cast<uint64_t>(info.upstream_us), out);
      }
      return;
    case Field::kTotalTimeMs:
      appendMs(info.total_us, out);
      return;
    case Field::kRetries:
      appendUint(info.retries, out);
      return;
    case Field::kResponseFlags:
      if (json) {
        out->push_back('"');
        appendFlags(info.flags, out);
        out->push_back('"');
      } else if (info.flags == 0) {
        out->push_back('-');
      } else {
        appendFlags(info.flags, out);
      }
      return;
    default:
      return;
  }
}

bool validContextKey(std::string_view key) {
  if (key.empty() || key.size() > 64) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string_view contextValue(const proxy::RequestInfo& info, std::string_view key) {
  if (info.context == nullptr) return {};
  for (const auto& [k, v] : *info.context) {
    if (k == key) return v;
  }
  return {};
}

}  // namespace

std::string_view fieldName(Field field) {
  size_t i = static_cast<size_t>(field);
  return i < static_cast<size_t>(Field::kCount) ? kFieldNames[i] : std::string_view();
}

bool fieldByName(std::string_view name, Field* out) {
  for (size_t i = 0; i < static_cast<size_t>(Field::kCount); ++i) {
    if (kFieldNames[i] == name) {
      *out = static_cast<Field>(i);
      return true;
    }
  }
  return false;
}

std::string fieldNames() {
  std::string out;
  for (std::string_view name : kFieldNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool Format::parse(std::string_view text, Format* out, std::string* error) {
  if (text == "json") {
    *out = Format();
    return true;
  }
  Format f;
  f.json_ = false;
  Piece piece;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c != '%') {
      piece.literal.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '%') {
      piece.literal.push_back('%');
      i += 2;
      continue;
    }
    if (i + 1 >= text.size() || text[i + 1] != '{') {
      *error = "'%' at offset " + std::to_string(i) +
               " must start a field '%{name}' (write '%%' for a percent sign)";
      return false;
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      *error = "unterminated '%{' at offset " + std::to_string(i);
      return false;
    }
    std::string_view name = text.substr(i + 2, close - i - 2);
    if (name.substr(0, 4) == "ctx.") {
      std::string_view key = name.substr(4);
      if (!validContextKey(key)) {
        *error = "context key '" + std::string(key) + "' at offset " + std::to_string(i) +
                 " must be 1 to 64 of A-Z a-z 0-9 _ . -";
        return false;
      }
      piece.ctx_key = std::string(key);
      f.pieces_.push_back(std::move(piece));
      piece = Piece();
      i = close + 1;
      continue;
    }
    Field field;
    if (!fieldByName(name, &field)) {
      *error = "unknown field '" + std::string(name) + "' at offset " + std::to_string(i) +
               " (known: " + fieldNames() + ")";
      return false;
    }
    piece.field = field;
    f.pieces_.push_back(std::move(piece));
    piece = Piece();
    i = close + 1;
  }
  if (!piece.literal.empty()) f.pieces_.push_back(std::move(piece));
  *out = std::move(f);
  return true;
}

void Format::append(const proxy::RequestInfo& info, std::string* out) const {
  if (json_) {
    appendJson(info, out);
    return;
  }
  for (const Piece& p : pieces_) {
    out->append(p.literal);
    if (!p.ctx_key.empty()) {
      appendTextValue(contextValue(info, p.ctx_key), out);
      continue;
    }
    if (p.field == Field::kCount) continue;
    bool is_string;
    std::string_view s = stringField(info, p.field, &is_string);
    if (is_string) {
      appendTextValue(s, out);
    } else {
      appendOther(info, p.field, false, out);
    }
  }
  out->push_back('\n');
}

void Format::appendJson(const proxy::RequestInfo& info, std::string* out) const {
  // Each field's key with its punctuation, made once: `{"time":"`, `,"status":` ... so a field
  // costs one append for its key and one for its value (this runs once per request).
  constexpr size_t kFields = static_cast<size_t>(Field::kCount);
  static const std::array<std::string, 2 * kFields> keys = [] {
    std::array<std::string, 2 * kFields> k;  // [2i]: before a number, [2i+1]: before a string
    for (size_t i = 0; i < kFields; ++i) {
      k[2 * i] = std::string(i == 0 ? "{" : ",") + "\"" + std::string(kFieldNames[i]) + "\":";
      k[2 * i + 1] = k[2 * i] + "\"";
    }
    return k;
  }();
  for (size_t i = 0; i < kFields; ++i) {
    auto f = static_cast<Field>(i);
    bool is_string;
    std::string_view s = stringField(info, f, &is_string);
    out->append(keys[2 * i + (is_string ? 1 : 0)]);
    if (is_string) {
      appendJsonEscaped(s, out);
      out->push_back('"');
    } else {
      appendOther(info, f, true, out);
    }
  }
  out->append(",\"ctx\":{");
  if (info.context != nullptr) {
    bool first = true;
    for (const auto& [key, value] : *info.context) {
      if (!first) out->push_back(',');
      first = false;
      appendJsonString(key, out);
      out->push_back(':');
      appendJsonString(value, out);
    }
  }
  out->append("}}\n");
}

}  // namespace sluice::accesslog
