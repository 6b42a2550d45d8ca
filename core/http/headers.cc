#include "core/http/headers.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace sluice::http {
namespace {

constexpr std::array<char, 256> makeLowerTable() {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return t;
}
constexpr std::array<char, 256> kLower = makeLowerTable();

inline char lower(char c) { return kLower[static_cast<unsigned char>(c)]; }

// Every hop-by-hop name starts with one of these letters: a cheap first filter.
inline bool mayBeHopByHop(std::string_view name) {
  if (name.size() < 2) return false;
  switch (lower(name[0])) {
    case 'c':
    case 'k':
    case 'p':
    case 't':
    case 'u':
      return true;
    default:
      return false;
  }
}

constexpr std::array<bool, 256> makeTcharTable() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kTchar = makeTcharTable();

// RFC 9110 §5.5 field-vchar, SP and HTAB (obs-text included): everything but the CTLs other
// than HTAB, and DEL.
constexpr std::array<bool, 256> makeFieldValueTable() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = (c >= 0x20 && c != 0x7f) || c == '\t';
  return t;
}
constexpr std::array<bool, 256> kFieldValueByte = makeFieldValueTable();

constexpr std::string_view kHopByHop[] = {"connection", "keep-alive",        "proxy-connection",
                                          "te",         "transfer-encoding", "upgrade",
                                          "trailer"};
// Fields a Connection header may not make us drop.
constexpr std::string_view kProtected[] = {
    "host", "content-length", "authorization", "proxy-authorization", "cookie", "x-forwarded-for"};

bool inList(std::string_view name, const std::string_view* list, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (equalsIgnoreCase(name, list[i])) return true;
  }
  return false;
}

}  // namespace

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool isHopByHop(std::string_view name) { return inList(name, kHopByHop, std::size(kHopByHop)); }

bool isToken(std::string_view s) {
  if (s.empty()) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  // Four lookups per branch: field names are short, the loop is most of the cost.
  for (; n >= 4; p += 4, n -= 4) {
    if (!(kTchar[p[0]] & kTchar[p[1]] & kTchar[p[2]] & kTchar[p[3]])) return false;
  }
  for (; n > 0; ++p, --n) {
    if (!kTchar[*p]) return false;
  }
  return true;
}

bool isFieldValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.front() == ' ' || s.front() == '\t' || s.back() == ' ' || s.back() == '\t') return false;
  const char* p = s.data();
  size_t n = s.size();
  // Eight bytes at a time while none of them is below 0x20 or 0x7F (exact tests, bytes of 0x80
  // and above never match); a word with one (HTAB, or a refused byte) goes byte by byte below.
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, sizeof(w));
    const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHighs;
    const uint64_t del = w ^ (kOnes * 0x7f);
    const uint64_t is_del = (del - kOnes) & ~del & kHighs;
    if ((below_space | is_del) != 0) break;
  }
  for (; n > 0; ++p, --n) {
    if (!kFieldValueByte[static_cast<unsigned char>(*p)]) return false;
  }
  return true;
}

void HeaderMap::add(std::string_view name, std::string_view value) {
  fields_.push_back(HeaderField{std::string(name), std::string(value)});
}

void HeaderMap::set(std::string_view name, std::string_view value) {
  bool done = false;
  for (auto it = fields_.begin(); it != fields_.end();) {
    if (equalsIgnoreCase(it->name, name)) {
      if (!done) {
        it->value.assign(value.data(), value.size());
        done = true;
        ++it;
      } else {
        it = fields_.erase(it);
      }
    } else {
      ++it;
    }
  }
  if (!done) add(name, value);
}

size_t HeaderMap::remove(std::string_view name) {
  size_t before = fields_.size();
  for (auto it = fields_.begin(); it != fields_.end();) {
    it = equalsIgnoreCase(it->name, name) ? fields_.erase(it) : it + 1;
  }
  return before - fields_.size();
}

const std::string* HeaderMap::get(std::string_view name, size_t index) const {
  for (const auto& f : fields_) {
    if (equalsIgnoreCase(f.name, name) && index-- == 0) return &f.value;
  }
  return nullptr;
}

size_t HeaderMap::count(std::string_view name) const {
  size_t n = 0;
  for (const auto& f : fields_) n += equalsIgnoreCase(f.name, name) ? 1 : 0;
  return n;
}

bool HeaderMap::hasToken(std::string_view name, std::string_view token) const {
  bool found = false;
  for (const auto& f : fields_) {
    if (!equalsIgnoreCase(f.name, name)) continue;
    forEachListElement(f.value, [&](std::string_view el) {
      if (equalsIgnoreCase(el, token)) found = true;
    });
  }
  return found;
}

void stripHopByHop(HeaderMap& headers) {
  std::vector<std::string> named;
  for (const auto& f : headers.fields()) {
    if (f.name.size() != 10 || !equalsIgnoreCase(f.name, "connection")) continue;
    forEachListElement(f.value, [&](std::string_view el) {
      if (!inList(el, kProtected, std::size(kProtected))) named.emplace_back(el);
    });
  }
  auto& fields = headers.mutableFields();
  for (auto it = fields.begin(); it != fields.end();) {
    bool drop = mayBeHopByHop(it->name) && isHopByHop(it->name);
    for (size_t i = 0; !drop && i < named.size(); ++i) drop = equalsIgnoreCase(it->name, named[i]);
    it = drop ? fields.erase(it) : it + 1;
  }
}

}  // namespace sluice::http
