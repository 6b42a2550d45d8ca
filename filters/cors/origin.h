// cors's origin model: which Origin header values (RFC 6454 §7, Fetch "ASCII serialization of an
// origin": scheme "://" host [":" port]) a configuration allows.
//
// An entry is one of:
//   "*"                            any origin (answered with `Access-Control-Allow-Origin: *`)
//   "null"                         the opaque origin browsers send from sandboxed frames, file: ...
//   "https://app.example.com"      exactly that origin (scheme, host and port compared
//                                  case-insensitively; an entry without a port matches
//                                  only an origin without one, as browsers omit default ports)
//   "https://*.example.com"        any origin whose host ends in ".example.com" (one or more labels
//                                  in place of the '*'; the apex example.com itself does not match)
//   "*.example.com", "app.example.com:8443"  without a scheme: http and https both match
// and, separately, regular expressions (RE2 syntax, filters/common/regex.h) matched against the
// whole Origin value as the browser sent it (case-sensitive; write (?i) for case-insensitive), in
// time linear in its length. Origins longer than 1024 bytes match nothing.
// Thread-safe when const.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}  // namespace re2

namespace sluice::filters::cors {

// The parts of an origin, lowercased. `port` is empty when the origin has none.
struct OriginParts {
  std::string scheme;
  std::string host;
  std::string port;
};

// Splits a serialized origin; nullopt when it is not one (a path, userinfo, a bad host or port).
std::optional<OriginParts> parseOrigin(std::string_view origin);

class OriginMatcher {
 public:
  // Adds an entry (see above); false with `why` set when it is not valid.
  bool addEntry(std::string_view entry, std::string* why);
  // Adds a regex (RE2 syntax; matched as a whole, RE2::FullMatch); false with `why` set when RE2
  // refuses it (syntax, back-references, lookaround, too large: RE2's message).
  bool addRegex(const std::string& pattern, std::string* why);

  bool allowsAny() const { return any_; }
  bool empty() const {
    return !any_ && !null_ && exact_.empty() && wildcard_.empty() && regex_.empty();
  }
  // True when `origin` (an Origin header value) is allowed by an entry other than "*".
  bool matchesSpecific(std::string_view origin) const;

 private:
  struct Wildcard {
    std::string scheme;  // empty: http or https
    std::string suffix;  // ".example.com"
    std::string port;    // empty: none
  };
  bool any_ = false;
  bool null_ = false;
  std::vector<OriginParts> exact_;  // scheme empty: http or https
  std::vector<Wildcard> wildcard_;
  std::vector<std::shared_ptr<const re2::RE2>> regex_;
};

}  // namespace sluice::filters::cors
