// An HTTP header map that keeps fields in wire order (RFC 9110 §5.3: order of same-named fields
// matters), with case-insensitive lookup (RFC 9110 §5.1). Small and linear: a request carries a
// few dozen fields, where a vector beats any hash map.
//
// Well-known field names are interned: each field carries a HeaderId, found once when the field
// is parsed or added (one case-insensitive lookup of the name), so that lookups of those names,
// hop-by-hop stripping and the codec's framing checks compare small integers, not strings.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::http {

// The interned field names (lookup is case-insensitive); kOther is every other name. At most 64
// values (sets of them are 64-bit masks).
enum class HeaderId : uint8_t {
  kOther = 0,
  kAccept,
  kAcceptEncoding,
  kAcceptLanguage,
  kAcceptRanges,
  kAge,
  kAuthorization,
  kCacheControl,
  kClose,  // reserved (RFC 9110 §16.3.2.2); interned for the "close" connection option
  kConnection,
  kContentEncoding,
  kContentLength,
  kContentType,
  kCookie,
  kDate,
  kEtag,
  kExpect,
  kExpires,
  kForwarded,
  kHost,
  kIfModifiedSince,
  kIfNoneMatch,
  kKeepAlive,
  kLastModified,
  kLocation,
  kOrigin,
  kPragma,
  kProxyAuthorization,
  kProxyConnection,
  kRange,
  kReferer,
  kRetryAfter,
  kServer,
  kSetCookie,
  kTe,
  kTrailer,
  kTransferEncoding,
  kUpgrade,
  kUserAgent,
  kVary,
  kVia,
  kXForwardedFor,
  kXForwardedHost,
  kXForwardedProto,
  kXRealIp,
  kXRequestId,
  kCount  // not a name
};

// The HeaderId of `name` (any case), kOther when it is not one of the interned names.
HeaderId headerId(std::string_view name);
// The lower-case name of an interned id ("content-length"); "" for kOther and kCount.
// headerIdSpelling: the usual spelling ("Content-Length"), for fields sluice adds.
std::string_view headerIdName(HeaderId id);
std::string_view headerIdSpelling(HeaderId id);

// One field: views of its name and value in the map's storage (or, for a name sluice adds by
// id, its static spelling). Valid until the map changes.
struct HeaderField {
  std::string_view name;
  std::string_view value;
  HeaderId id = HeaderId::kOther;  // headerId(name), kept by HeaderMap and the parser
};

// Storage: the fields' names and values are bytes of one arena owned by the map (appended, never
// moved except when the arena grows, then every field is re-pointed); a field is two views and
// an id, so adding one allocates nothing while the arena and the field vector have room. A
// parsed message's map takes an arena and a vector from its thread's spares (see reserve()),
// which destroyed maps give back: in steady state no allocation per message. Removing or
// replacing a field leaves its old bytes in the arena until clear().
//
// Not thread-safe; a map is used on one thread at a time (the spares are per thread).
class HeaderMap {
 public:
  // How many fields a message's vector is reserved for up front (1 KiB), and the arena's first
  // size in bytes. Storage of exactly these sizes goes back to the thread's spares.
  static constexpr size_t kReservedFields = 1024 / sizeof(HeaderField);
  static constexpr size_t kReservedBytes = 2048;

  HeaderMap() = default;
  HeaderMap(const HeaderMap& other);
  HeaderMap(HeaderMap&& other) noexcept;
  HeaderMap& operator=(const HeaderMap& other);
  // The storage a map drops (destroyed, or assigned over) goes back to this thread's spares
  // when it has the reserved sizes.
  HeaderMap& operator=(HeaderMap&& other) noexcept;
  ~HeaderMap() {
    if (bytes_ != nullptr || fields_.capacity() != 0) recycle();  // moved-from maps: nothing
  }
  void swap(HeaderMap& other) noexcept;

  // Makes room for kReservedFields fields and kReservedBytes bytes, without allocating when
  // this thread has spare storage (from a map destroyed on it); the map must be empty. Each
  // message the parser starts calls it: the head is handed over to its stream (swapped), so
  // capacity does not carry over from one message to the next on its own.
  void reserve();

  // Appends a field (no validation: see isToken/isFieldValue). `name` and `value` may be views
  // of this map's own fields.
  void add(std::string_view name, std::string_view value);
  // Replaces every field called `name` by one field (appended when absent). By id, an appended
  // field gets the name's usual spelling ("X-Forwarded-For"); id must not be kOther.
  void set(std::string_view name, std::string_view value);
  void set(HeaderId id, std::string_view value);
  // Removes every field called `name`; returns how many.
  size_t remove(std::string_view name);
  size_t remove(HeaderId id);
  // The index-th value of `name`, or nullptr. Valid until the map changes.
  const std::string_view* get(std::string_view name, size_t index = 0) const;
  const std::string_view* get(HeaderId id, size_t index = 0) const;
  // How many fields are called `name`.
  size_t count(std::string_view name) const;
  size_t count(HeaderId id) const;
  bool has(std::string_view name) const { return get(name) != nullptr; }
  bool has(HeaderId id) const { return (present_ & idBit(id)) != 0; }
  // By a name resolved beforehand (core/api's interned header names): `id` is headerId(name)
  // and `name` outlives the map (an appended or set field views it, it is not copied), so
  // neither the id nor the name is looked at again. Same results as the calls above.
  void addResolved(HeaderId id, std::string_view name, std::string_view value) {
    append(id, name, value, true);
  }
  void setResolved(HeaderId id, std::string_view name, std::string_view value) {
    setNamed(id, name, value, true);
  }
  size_t removeResolved(HeaderId id, std::string_view name) { return removeNamed(id, name); }
  const std::string_view* getResolved(HeaderId id, std::string_view name, size_t index) const;

  // True when some comma-separated element of any `name` field equals `token`
  // (case-insensitive), e.g. hasToken("Connection", "close").
  bool hasToken(std::string_view name, std::string_view token) const;

  const std::vector<HeaderField>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }
  // Drops every field; keeps the storage.
  void clear() {
    fields_.clear();
    used_ = 0;
    present_ = 0;
    connection_options_ = 0;
    connection_other_ = false;
  }

  // For the parser, which copies a field's name and then its value into the arena piece by
  // piece as llhttp hands them over and adds the field when it is complete: appendBytes copies
  // `len` bytes to the end of the arena; bytesUsed() is where the next byte goes; addStored adds
  // a field whose name and value are the arena's bytes at those offsets.
  void appendBytes(const char* data, size_t len) {
    if (cap_ - used_ < len || bytes_ == nullptr) grow(len, nullptr, nullptr);  // no arena yet
    std::memcpy(bytes_ + used_, data, len);
    used_ += len;
  }
  size_t bytesUsed() const { return used_; }
  std::string_view storedBytes(size_t offset, size_t len) const {
    return std::string_view(bytes_ + offset, len);
  }
  void addStored(HeaderId id, std::string_view name, std::string_view value) {
    fields_.push_back(HeaderField{name, value, id});
    present_ |= idBit(id);
    if (id == HeaderId::kConnection) noteConnection(value);
  }
  // For the parser, which adds the fields of the buffer it parses (addStored) as views of that
  // buffer and then copies them in at once: the fields from index `first` on view bytes outside
  // the arena, in increasing order; they are copied into it and re-pointed. One copy of the
  // span from the first name to the last value, separators included, when the arena has room
  // for it; else each name and value alone (the arena grows only for names and values, which
  // the parser's limits bound, never for a peer's runs of OWS).
  void copyInFields(size_t first);

  // One bit per interned id present in the map (bit 0, kOther, is never set).
  static constexpr uint64_t idBit(HeaderId id) {
    return id == HeaderId::kOther ? 0 : uint64_t{1} << static_cast<unsigned>(id);
  }
  uint64_t presentIds() const { return present_; }
  // idBit of every interned name that some Connection field lists as an option, e.g. kClose,
  // kKeepAlive, kUpgrade (RFC 9110 §7.6.1), gathered as Connection fields are added or parsed.
  uint64_t connectionOptions() const { return connection_options_; }

 private:
  friend void stripHopByHop(HeaderMap& headers);

  // Appends a field with `name` copied (or, when name_is_static, viewed as it is).
  void append(HeaderId id, std::string_view name, std::string_view value, bool name_is_static);
  // set/remove of `name`, whose interned id is `id`; name_is_static as for append().
  void setNamed(HeaderId id, std::string_view name, std::string_view value, bool name_is_static);
  size_t removeNamed(HeaderId id, std::string_view name);
  // Makes room for `need` more bytes: a bigger arena, every field re-pointed, and *a and *b
  // (when not null) too if they view the old arena.
  void grow(size_t need, std::string_view* a, std::string_view* b);
  // Hands the storage to the thread's spares when it has the reserved sizes, else frees it.
  void recycle() noexcept;
  void copyFrom(const HeaderMap& other);
  // Adds the options a Connection field's value lists to connection_options_/_other_.
  void noteConnection(std::string_view value);
  // True when field `f` is called `name`, whose interned id is `id`.
  static bool named(const HeaderField& f, HeaderId id, std::string_view name);

  std::vector<HeaderField> fields_;
  char* bytes_ = nullptr;  // the arena, cap_ bytes, owned (new[])
  size_t used_ = 0;
  size_t cap_ = 0;
  uint64_t present_ = 0;             // idBit of every interned id among fields_
  uint64_t connection_options_ = 0;  // see connectionOptions()
  bool connection_other_ = false;    // a Connection field lists a name that is not interned
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
bool isHopByHop(HeaderId id);

// Removes hop-by-hop fields (RFC 9110 §7.6.1): Connection, Keep-Alive, Proxy-Connection, TE,
// Transfer-Encoding, Upgrade, Trailer, plus every field named in Connection — except Host,
// Content-Length, Transfer-Encoding framing (the codec re-frames) and Authorization, which a
// client cannot make a proxy drop.
void stripHopByHop(HeaderMap& headers);

}  // namespace sluice::http
