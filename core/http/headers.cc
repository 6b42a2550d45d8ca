#include "core/http/headers.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice::http {
namespace {

constexpr std::array<char, 256> makeLowerTable() {
  std::array<char, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return t;
}
constexpr std::array<char, 256> kLower = makeLowerTable();

inline char lower(char c) { return kLower[static_cast<unsigned char>(c)]; }

constexpr std::array<bool, 256> makeTcharTable() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kTchar = makeTcharTable();

// The interned names, lower case, in HeaderId order.
constexpr std::string_view kIdNames[] = {
    "",
    "accept",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "authorization",
    "cache-control",
    "close",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "forwarded",
    "host",
    "if-modified-since",
    "if-none-match",
    "keep-alive",
    "last-modified",
    "location",
    "origin",
    "pragma",
    "proxy-authorization",
    "proxy-connection",
    "range",
    "referer",
    "retry-after",
    "server",
    "set-cookie",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "x-request-id",
};
// The usual spellings, in HeaderId order.
constexpr std::string_view kIdSpellings[] = {
    "",
    "Accept",
    "Accept-Encoding",
    "Accept-Language",
    "Accept-Ranges",
    "Age",
    "Authorization",
    "Cache-Control",
    "Close",
    "Connection",
    "Content-Encoding",
    "Content-Length",
    "Content-Type",
    "Cookie",
    "Date",
    "ETag",
    "Expect",
    "Expires",
    "Forwarded",
    "Host",
    "If-Modified-Since",
    "If-None-Match",
    "Keep-Alive",
    "Last-Modified",
    "Location",
    "Origin",
    "Pragma",
    "Proxy-Authorization",
    "Proxy-Connection",
    "Range",
    "Referer",
    "Retry-After",
    "Server",
    "Set-Cookie",
    "TE",
    "Trailer",
    "Transfer-Encoding",
    "Upgrade",
    "User-Agent",
    "Vary",
    "Via",
    "X-Forwarded-For",
    "X-Forwarded-Host",
    "X-Forwarded-Proto",
    "X-Real-IP",
    "X-Request-Id",
};
static_assert(std::size(kIdSpellings) == std::size(kIdNames), "one spelling per name");

constexpr size_t kIdCount = static_cast<size_t>(HeaderId::kCount);
static_assert(std::size(kIdNames) == kIdCount, "kIdNames must list every HeaderId in order");
static_assert(kIdCount <= 64, "HeaderId sets are 64-bit masks");

constexpr size_t kMaxIdNameLength = 19;

// A perfect hash of the interned names over their length and first and last bytes (| 0x20:
// lower case for letters); a lookup then compares against one name at most. A new name that
// collides fails to compile here: change the multipliers.
constexpr size_t kSlots = 128;
constexpr size_t slotOf(size_t len, char first, char last) {
  return (len + static_cast<unsigned char>(first | 0x20) * 34u +
          static_cast<unsigned char>(last | 0x20) * 3u) &
         (kSlots - 1);
}
struct Slots {
  uint8_t id[kSlots] = {};
};
constexpr Slots makeSlots() {
  Slots t;
  for (size_t id = 1; id < kIdCount; ++id) {
    std::string_view n = kIdNames[id];
    if (n.size() < 2 || n.size() > kMaxIdNameLength) throw "interned name length out of range";
    size_t slot = slotOf(n.size(), n.front(), n.back());
    if (t.id[slot] != 0) throw "interned names collide in the slot table";
    t.id[slot] = static_cast<uint8_t>(id);
  }
  return t;
}
constexpr Slots kSlotTable = makeSlots();

// Case-folding masks of the interned names: 0x20 under each letter, 0 under anything else, so
// that (byte | mask) == literal byte holds exactly for either case of a letter and only for
// the byte itself elsewhere ('-' | 0x20 would also match CR).
constexpr size_t kMaskStride = kMaxIdNameLength + 1;
struct FoldMasks {
  char bytes[kIdCount][kMaskStride] = {};
};
constexpr FoldMasks makeFoldMasks() {
  FoldMasks m;
  for (size_t id = 1; id < kIdCount; ++id) {
    for (size_t i = 0; i < kIdNames[id].size(); ++i) {
      char c = kIdNames[id][i];
      m.bytes[id][i] = c >= 'a' && c <= 'z' ? 0x20 : 0;
    }
  }
  return m;
}
constexpr FoldMasks kFoldMasks = makeFoldMasks();

template <typename Word>
inline Word load(const char* p) {
  Word w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}

// One piece of the comparison: the Word at offset `at` of name, folded, equals the literal's.
template <typename Word>
inline bool foldedEqualAt(const char* name, const char* lit, const char* mask, size_t at) {
  return (load<Word>(name + at) | load<Word>(mask + at)) == load<Word>(lit + at);
}

// `name` (len >= 2 bytes) equals the interned name `lit` of the same length in any case. Reads
// whole words within [0, len) only: the last word overlaps the one before it when len is not a
// multiple of its size.
inline bool foldedEqual(const char* name, const char* lit, const char* mask, size_t len) {
  if (len >= 8) {
    for (size_t i = 0; i + 8 < len; i += 8) {
      if (!foldedEqualAt<uint64_t>(name, lit, mask, i)) return false;
    }
    return foldedEqualAt<uint64_t>(name, lit, mask, len - 8);
  }
  if (len >= 4) {
    return foldedEqualAt<uint32_t>(name, lit, mask, 0) &&
           foldedEqualAt<uint32_t>(name, lit, mask, len - 4);
  }
  return foldedEqualAt<uint16_t>(name, lit, mask, 0) &&
         foldedEqualAt<uint16_t>(name, lit, mask, len - 2);
}

constexpr uint64_t bit(HeaderId id) { return uint64_t{1} << static_cast<unsigned>(id); }

constexpr uint64_t kHopByHopMask = bit(HeaderId::kConnection) | bit(HeaderId::kKeepAlive) |
                                   bit(HeaderId::kProxyConnection) | bit(HeaderId::kTe) |
                                   bit(HeaderId::kTransferEncoding) | bit(HeaderId::kUpgrade) |
                                   bit(HeaderId::kTrailer);
// Fields a Connection header may not make us drop.
constexpr uint64_t kProtectedMask =
    bit(HeaderId::kHost) | bit(HeaderId::kContentLength) | bit(HeaderId::kAuthorization) |
    bit(HeaderId::kProxyAuthorization) | bit(HeaderId::kCookie) | bit(HeaderId::kXForwardedFor);

// SWAR: a 0x80 bit in each byte of `w` that is below 0x20 or is 0x7f (may also flag a byte
// next to one that is, through borrows; callers recheck a flagged word byte by byte).
inline uint64_t controlBytes(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  uint64_t below_space = (w - kOnes * 0x20) & ~w;
  uint64_t x = w ^ (kOnes * 0x7f);
  uint64_t del = (x - kOnes) & ~x;
  return (below_space | del) & kHigh;
}

inline bool fieldValueByte(unsigned char c) { return (c >= 0x20 && c != 0x7f) || c == '\t'; }

}  // namespace

HeaderId headerId(std::string_view name) {
  const size_t len = name.size();
  if (len < 2 || len > kMaxIdNameLength) return HeaderId::kOther;  // "te" is the shortest
  const uint8_t id = kSlotTable.id[slotOf(len, name.front(), name.back())];
  if (id == 0 || kIdNames[id].size() != len ||
      !foldedEqual(name.data(), kIdNames[id].data(), kFoldMasks.bytes[id], len)) {
    return HeaderId::kOther;
  }
  return static_cast<HeaderId>(id);
}

std::string_view headerIdSpelling(HeaderId id) {
  size_t i = static_cast<size_t>(id);
  return i < kIdCount ? kIdSpellings[i] : std::string_view();
}

std::string_view headerIdName(HeaderId id) {
  size_t i = static_cast<size_t>(id);
  return i < kIdCount ? kIdNames[i] : std::string_view();
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool isHopByHop(HeaderId id) { return (kHopByHopMask & bit(id)) != 0; }
bool isHopByHop(std::string_view name) { return isHopByHop(headerId(name)); }

bool isToken(std::string_view s) {
  if (s.empty()) return false;
  const char* p = s.data();
  const char* end = p + s.size();
  // Eight bytes per branch: the table lookups are and-ed together.
  for (; end - p >= 8; p += 8) {
    bool ok = true;
    for (int i = 0; i < 8; ++i) ok &= kTchar[static_cast<unsigned char>(p[i])];
    if (!ok) return false;
  }
  for (; p < end; ++p) {
    if (!kTchar[static_cast<unsigned char>(*p)]) return false;
  }
  return true;
}

bool isFieldValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.front() == ' ' || s.front() == '\t' || s.back() == ' ' || s.back() == '\t') return false;
  const char* p = s.data();
  const size_t n = s.size();
#if defined(__SSE2__)
  if (n >= 16) {
    // Sixteen bytes at a time, the last block overlapping the one before it: a byte is refused
    // when it is at most 0x1f (unsigned) or 0x7f, unless it is HTAB.
    const __m128i k1f = _mm_set1_epi8(0x1f);
    const __m128i k7f = _mm_set1_epi8(0x7f);
    const __m128i kTab = _mm_set1_epi8('\t');
    for (size_t i = 0;; i += 16) {
      if (i + 16 > n) i = n - 16;
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i ctl =
          _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(v, k1f), k1f), _mm_cmpeq_epi8(v, k7f));
      const int bad = _mm_movemask_epi8(ctl);
      if (bad != 0 && (bad & ~_mm_movemask_epi8(_mm_cmpeq_epi8(v, kTab))) != 0) return false;
      if (i + 16 == n) return true;
    }
  }
#endif
  if (n < 8) {
    for (size_t i = 0; i < n; ++i) {
      if (!fieldValueByte(static_cast<unsigned char>(p[i]))) return false;
    }
    return true;
  }
  // Eight bytes at a time, the last word overlapping the one before it; a word with a candidate
  // control byte (HTAB is one) is checked byte by byte.
  for (size_t i = 0;; i += 8) {
    if (i + 8 > n) i = n - 8;
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (controlBytes(w) != 0) {
      for (size_t j = i; j < i + 8; ++j) {
        if (!fieldValueByte(static_cast<unsigned char>(p[j]))) return false;
      }
    }
    if (i + 8 == n) return true;
  }
}

namespace {

// Per thread: storage of the reserved sizes (a field vector of kReservedFields capacity, empty,
// and an arena of kReservedBytes) from destroyed maps. Bounded: at most kSpares × 3 KiB idle per
// thread. `t_spares` is a plain pointer, readable at any time (also while the thread exits,
// after the list itself is gone: then it is null).
constexpr size_t kSpares = 16;
struct SpareStorage {
  std::vector<HeaderField> fields;
  char* bytes = nullptr;
};
struct Spares;
thread_local Spares* t_spares = nullptr;
struct Spares {
  SpareStorage s[kSpares];
  size_t n = 0;
  Spares() { t_spares = this; }
  ~Spares() {
    t_spares = nullptr;
    for (size_t i = 0; i < n; ++i) delete[] s[i].bytes;
  }
};
Spares& spares() {
  if (t_spares != nullptr) return *t_spares;
  thread_local Spares list;
  return list;
}

// `v` re-pointed from [from, from + len) to the same place in `to` when it views that range.
inline void rebase(std::string_view& v, const char* from, size_t len, const char* to) {
  if (v.data() >= from && v.data() < from + len) {
    v = std::string_view(to + (v.data() - from), v.size());
  }
}

}  // namespace

void HeaderMap::recycle() noexcept {
  Spares* list = t_spares;
  if (list != nullptr && list->n < kSpares && fields_.capacity() == kReservedFields &&
      cap_ == kReservedBytes) {
    SpareStorage& spare = list->s[list->n++];
    fields_.clear();
    spare.fields.swap(fields_);
    spare.bytes = bytes_;
  } else {
    delete[] bytes_;
    std::vector<HeaderField>().swap(fields_);
  }
  bytes_ = nullptr;
  used_ = cap_ = 0;
  present_ = 0;
  connection_options_ = 0;
  connection_other_ = false;
}

HeaderMap::HeaderMap(HeaderMap&& other) noexcept
    : fields_(std::move(other.fields_)),
      bytes_(std::exchange(other.bytes_, nullptr)),
      used_(std::exchange(other.used_, 0)),
      cap_(std::exchange(other.cap_, 0)),
      present_(std::exchange(other.present_, 0)),
      connection_options_(std::exchange(other.connection_options_, 0)),
      connection_other_(std::exchange(other.connection_other_, false)) {
  other.fields_.clear();
}

HeaderMap& HeaderMap::operator=(HeaderMap&& other) noexcept {
  if (this != &other) {
    if (bytes_ != nullptr || fields_.capacity() != 0) recycle();
    swap(other);
  }
  return *this;
}

void HeaderMap::swap(HeaderMap& other) noexcept {
  fields_.swap(other.fields_);
  std::swap(bytes_, other.bytes_);
  std::swap(used_, other.used_);
  std::swap(cap_, other.cap_);
  std::swap(present_, other.present_);
  std::swap(connection_options_, other.connection_options_);
  std::swap(connection_other_, other.connection_other_);
}

void HeaderMap::noteConnection(std::string_view value) {
  forEachListElement(value, [&](std::string_view el) {
    const HeaderId id = headerId(el);
    if (id == HeaderId::kOther) {
      connection_other_ = true;
    } else {
      connection_options_ |= idBit(id);
    }
  });
}

HeaderMap::HeaderMap(const HeaderMap& other) { copyFrom(other); }

HeaderMap& HeaderMap::operator=(const HeaderMap& other) {
  if (this != &other) {
    clear();
    copyFrom(other);
  }
  return *this;
}

// Copies the fields into this (empty) map's arena, compacted; static names stay views.
void HeaderMap::copyFrom(const HeaderMap& other) {
  fields_.reserve(other.fields_.size());
  for (const HeaderField& f : other.fields_) {
    const bool name_is_static =
        f.id != HeaderId::kOther && f.name.data() == headerIdSpelling(f.id).data();
    append(f.id, f.name, f.value, name_is_static);
  }
}

void HeaderMap::reserve() {
  if (bytes_ != nullptr && fields_.capacity() >= kReservedFields) return;
  Spares& list = spares();
  if (list.n > 0 && bytes_ == nullptr && fields_.capacity() == 0) {
    SpareStorage& spare = list.s[--list.n];
    fields_.swap(spare.fields);
    bytes_ = std::exchange(spare.bytes, nullptr);
    cap_ = kReservedBytes;
    return;
  }
  fields_.reserve(kReservedFields);
  if (bytes_ == nullptr) {
    bytes_ = new char[kReservedBytes];
    cap_ = kReservedBytes;
  }
}

void HeaderMap::grow(size_t need, std::string_view* a, std::string_view* b) {
  if (bytes_ == nullptr && fields_.capacity() == 0) {
    reserve();  // a map filled by hand (a local reply): the thread's spare storage
    if (cap_ - used_ >= need) return;
  }
  size_t cap = std::max(cap_ * 2, used_ + need);
  if (cap < kReservedBytes) cap = kReservedBytes;
  char* bytes = new char[cap];
  if (used_ != 0) std::memcpy(bytes, bytes_, used_);
  for (HeaderField& f : fields_) {
    rebase(f.name, bytes_, used_, bytes);
    rebase(f.value, bytes_, used_, bytes);
  }
  if (a != nullptr) rebase(*a, bytes_, used_, bytes);
  if (b != nullptr) rebase(*b, bytes_, used_, bytes);
  delete[] bytes_;
  bytes_ = bytes;
  cap_ = cap;
}

void HeaderMap::copyInFields(size_t first) {
  const size_t n = fields_.size();
  if (first >= n) return;
  const char* lo = fields_[first].name.data();
  const HeaderField& last = fields_[n - 1];
  const char* hi =
      std::max(last.value.data() + last.value.size(), last.name.data() + last.name.size());
  const auto span = static_cast<size_t>(hi - lo);
  if (span <= cap_ - used_ && bytes_ != nullptr) {
    // The span from the first name to the last value, separators included, in one copy, when
    // the arena has room for it as it is; the arena only grows for names and values (below).
    char* to = bytes_ + used_;
    std::memcpy(to, lo, span);
    used_ += span;
    for (size_t i = first; i < n; ++i) {
      HeaderField& f = fields_[i];
      f.name = std::string_view(to + (f.name.data() - lo), f.name.size());
      f.value = std::string_view(to + (f.value.data() - lo), f.value.size());
    }
    return;
  }
  size_t payload = 0;
  for (size_t i = first; i < n; ++i) payload += fields_[i].name.size() + fields_[i].value.size();
  if (cap_ - used_ < payload || bytes_ == nullptr) grow(payload, nullptr, nullptr);
  char* to = bytes_ + used_;
  for (size_t i = first; i < n; ++i) {
    HeaderField& f = fields_[i];
    if (!f.name.empty()) std::memcpy(to, f.name.data(), f.name.size());
    f.name = std::string_view(to, f.name.size());
    to += f.name.size();
    if (!f.value.empty()) std::memcpy(to, f.value.data(), f.value.size());
    f.value = std::string_view(to, f.value.size());
    to += f.value.size();
  }
  used_ += payload;
}

bool HeaderMap::named(const HeaderField& f, HeaderId id, std::string_view name) {
  return id != HeaderId::kOther ? f.id == id
                                : f.id == HeaderId::kOther && equalsIgnoreCase(f.name, name);
}

void HeaderMap::append(HeaderId id, std::string_view name, std::string_view value,
                       bool name_is_static) {
  const size_t need = (name_is_static ? 0 : name.size()) + value.size();
  if (cap_ - used_ < need) grow(need, &name, &value);  // they may view the arena
  char* p = bytes_ + used_;
  if (!name_is_static) {
    if (!name.empty()) std::memcpy(p, name.data(), name.size());
    name = std::string_view(p, name.size());
    p += name.size();
  }
  if (!value.empty()) std::memcpy(p, value.data(), value.size());
  used_ += need;
  fields_.push_back(HeaderField{name, std::string_view(p, value.size()), id});
  present_ |= idBit(id);
  if (id == HeaderId::kConnection) noteConnection(fields_.back().value);
}

void HeaderMap::add(std::string_view name, std::string_view value) {
  append(headerId(name), name, value, false);
}

void HeaderMap::set(std::string_view name, std::string_view value) {
  setNamed(headerId(name), name, value, false);
}

void HeaderMap::set(HeaderId id, std::string_view value) {
  if (id != HeaderId::kOther) setNamed(id, headerIdSpelling(id), value, true);
}

void HeaderMap::setNamed(HeaderId id, std::string_view name, std::string_view value,
                         bool name_is_static) {
  auto it = fields_.end();
  if (id == HeaderId::kOther || (present_ & idBit(id)) != 0) {
    it = std::find_if(fields_.begin(), fields_.end(),
                      [&](const HeaderField& f) { return named(f, id, name); });
  }
  if (it == fields_.end()) {
    append(id, name, value, name_is_static);
    return;
  }
  // Later fields of that name go; the first keeps its place and takes the new value.
  if (id == HeaderId::kConnection) {
    connection_options_ = 0;  // noted again below from the one Connection field left
    connection_other_ = false;
  }
  const size_t at = static_cast<size_t>(it - fields_.begin());
  fields_.erase(std::remove_if(it + 1, fields_.end(),
                               [&](const HeaderField& f) { return named(f, id, name); }),
                fields_.end());
  std::string_view old = fields_[at].value;
  const bool in_arena = old.data() >= bytes_ && old.data() < bytes_ + used_;
  if (in_arena && value.size() <= old.size()) {
    char* p = bytes_ + (old.data() - bytes_);
    if (!value.empty()) std::memmove(p, value.data(), value.size());  // it may be `old` itself
    fields_[at].value = std::string_view(p, value.size());
  } else {
    if (cap_ - used_ < value.size()) grow(value.size(), &value, nullptr);
    char* p = bytes_ + used_;
    if (!value.empty()) std::memcpy(p, value.data(), value.size());
    used_ += value.size();
    fields_[at].value = std::string_view(p, value.size());
  }
  if (id == HeaderId::kConnection) noteConnection(fields_[at].value);
}

size_t HeaderMap::remove(std::string_view name) { return removeNamed(headerId(name), name); }

size_t HeaderMap::remove(HeaderId id) {
  return id == HeaderId::kOther ? 0 : removeNamed(id, headerIdName(id));
}

size_t HeaderMap::removeNamed(HeaderId id, std::string_view name) {
  if (id != HeaderId::kOther && (present_ & idBit(id)) == 0) return 0;
  size_t before = fields_.size();
  fields_.erase(std::remove_if(fields_.begin(), fields_.end(),
                               [&](const HeaderField& f) { return named(f, id, name); }),
                fields_.end());
  present_ &= ~idBit(id);
  if (id == HeaderId::kConnection) {
    connection_options_ = 0;
    connection_other_ = false;
  }
  return before - fields_.size();
}

const std::string_view* HeaderMap::get(std::string_view name, size_t index) const {
  const HeaderId id = headerId(name);
  if (id != HeaderId::kOther) return get(id, index);
  for (const auto& f : fields_) {
    if (named(f, id, name) && index-- == 0) return &f.value;
  }
  return nullptr;
}

const std::string_view* HeaderMap::getResolved(HeaderId id, std::string_view name,
                                               size_t index) const {
  if (id != HeaderId::kOther) return get(id, index);
  for (const auto& f : fields_) {
    if (f.id == HeaderId::kOther && equalsIgnoreCase(f.name, name) && index-- == 0) {
      return &f.value;
    }
  }
  return nullptr;
}

const std::string_view* HeaderMap::get(HeaderId id, size_t index) const {
  if ((present_ & idBit(id)) == 0) return nullptr;
  for (const auto& f : fields_) {
    if (f.id == id && index-- == 0) return &f.value;
  }
  return nullptr;
}

size_t HeaderMap::count(std::string_view name) const {
  const HeaderId id = headerId(name);
  if (id != HeaderId::kOther) return count(id);
  size_t n = 0;
  for (const auto& f : fields_) n += named(f, id, name) ? 1 : 0;
  return n;
}

size_t HeaderMap::count(HeaderId id) const {
  if ((present_ & idBit(id)) == 0) return 0;
  size_t n = 0;
  for (const auto& f : fields_) n += f.id == id ? 1 : 0;
  return n;
}

bool HeaderMap::hasToken(std::string_view name, std::string_view token) const {
  const HeaderId id = headerId(name);
  if (id != HeaderId::kOther && (present_ & idBit(id)) == 0) return false;
  bool found = false;
  for (const auto& f : fields_) {
    if (!named(f, id, name)) continue;
    forEachListElement(f.value, [&](std::string_view el) {
      if (equalsIgnoreCase(el, token)) found = true;
    });
  }
  return found;
}

void stripHopByHop(HeaderMap& headers) {
  // Names a Connection field lists only count when there is one, and Connection is itself
  // hop-by-hop: a map with none of these has nothing to strip (the usual request).
  if ((headers.present_ & kHopByHopMask) == 0) return;
  // The interned names Connection lists were noted as its fields came in; only names that are
  // not interned (rare) need its values read again.
  const uint64_t drop = kHopByHopMask | (headers.connection_options_ & ~kProtectedMask);
  std::vector<std::string_view> named;  // views of this map's bytes, which do not move here
  if (headers.connection_other_) {
    for (const auto& f : headers.fields_) {
      if (f.id != HeaderId::kConnection) continue;
      forEachListElement(f.value, [&](std::string_view el) {
        if (headerId(el) == HeaderId::kOther) named.push_back(el);  // protected ones are interned
      });
    }
  }
  auto& fields = headers.fields_;
  fields.erase(std::remove_if(fields.begin(), fields.end(),
                              [&](const HeaderField& f) {
                                if (f.id != HeaderId::kOther) return (drop & bit(f.id)) != 0;
                                for (std::string_view n : named) {
                                  if (equalsIgnoreCase(f.name, n)) return true;
                                }
                                return false;
                              }),
               fields.end());
  headers.present_ &= ~drop;
  headers.connection_options_ = 0;  // Connection itself is gone
  headers.connection_other_ = false;
}

}  // namespace sluice::http
