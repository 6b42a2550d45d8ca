// An HTTP header map that keeps fields in wire order (RFC 9110 §5.3: order of same-named fields
// matters), with case-insensitive lookup (RFC 9110 §5.1). Small and linear: a request carries a
// few dozen fields, where a vector beats any hash map.
//
// Well-known field names are interned: each field carries a HeaderId, found once when the field
// is parsed or added (one case-insensitive lookup of the name), so that lookups of those names,
// hop-by-hop stripping and the codec's framing checks compare small integers, not strings.
#pragma once

#include <cstdint>
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

struct HeaderField {
  std::string name;
  std::string value;
  // headerId(name). HeaderMap and the parser keep it in step; code that edits `name` through
  // mutableFields() must update it too.
  HeaderId id = HeaderId::kOther;
};

class HeaderMap {
 public:
  // How many fields a message's vector is reserved for up front: 1 KiB, which glibc's per-thread
  // cache still serves.
  static constexpr size_t kReservedFields = 1024 / sizeof(HeaderField);

  HeaderMap() = default;
  HeaderMap(const HeaderMap&) = default;
  HeaderMap(HeaderMap&&) noexcept = default;
  HeaderMap& operator=(const HeaderMap&) = default;
  // A vector of kReservedFields capacity that a map drops (destroyed, or assigned over by a
  // move) goes back to this thread's spare list (see reserve()).
  HeaderMap& operator=(HeaderMap&& other) noexcept;
  ~HeaderMap() { recycle(); }

  // Makes room for kReservedFields fields without allocating when this thread has a spare
  // vector (from a map destroyed on it); the map must be empty. Each message the parser starts
  // calls it: the head is handed over to its stream (swapped), so capacity does not carry over
  // from one message to the next on its own.
  void reserve();

  // Appends a field (no validation: see isToken/isFieldValue).
  void add(std::string_view name, std::string_view value);
  // Replaces every field called `name` by one field (appended when absent). By id, an appended
  // field gets the name's usual spelling ("X-Forwarded-For"); id must not be kOther.
  void set(std::string_view name, std::string_view value);
  void set(HeaderId id, std::string_view value);
  // Removes every field called `name`; returns how many.
  size_t remove(std::string_view name);
  size_t remove(HeaderId id);
  // The index-th value of `name`, or nullptr. Valid until the map changes.
  const std::string* get(std::string_view name, size_t index = 0) const;
  const std::string* get(HeaderId id, size_t index = 0) const;
  // How many fields are called `name`.
  size_t count(std::string_view name) const;
  size_t count(HeaderId id) const;
  bool has(std::string_view name) const { return get(name) != nullptr; }
  bool has(HeaderId id) const { return get(id) != nullptr; }
  // True when some comma-separated element of any `name` field equals `token`
  // (case-insensitive), e.g. hasToken("Connection", "close").
  bool hasToken(std::string_view name, std::string_view token) const;

  const std::vector<HeaderField>& fields() const { return fields_; }
  // For moving fields in and out (swap) and for the parser; see HeaderField::id.
  std::vector<HeaderField>& mutableFields() { return fields_; }
  size_t size() const { return fields_.size(); }
  void clear() { fields_.clear(); }

 private:
  // set/remove of `name`, whose interned id is `id`.
  void setNamed(HeaderId id, std::string_view name, std::string_view value);
  size_t removeNamed(HeaderId id, std::string_view name);
  // Hands fields_'s storage to the thread's spares when it has the reserved capacity.
  void recycle() noexcept;
  // True when field `f` is called `name`, whose interned id is `id`.
  static bool named(const HeaderField& f, HeaderId id, std::string_view name);

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
bool isHopByHop(HeaderId id);

// Removes hop-by-hop fields (RFC 9110 §7.6.1): Connection, Keep-Alive, Proxy-Connection, TE,
// Transfer-Encoding, Upgrade, Trailer, plus every field named in Connection — except Host,
// Content-Length, Transfer-Encoding framing (the codec re-frames) and Authorization, which a
// client cannot make a proxy drop.
void stripHopByHop(HeaderMap& headers);

}  // namespace sluice::http
