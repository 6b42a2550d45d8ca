// Tiny URL helpers for registry formats that store URLs (Dubbo): percent-decoding and a parser
// for "scheme://[user@]host:port/path?k=v&k2=v2". Written by hand on purpose: the input is the
// registry's own, well-specified shape, and the rules below are what Dubbo's Java side writes
// (java.net.URLEncoder: '+' for space, %XX for the rest). Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::zookeeper {

// Decodes %XX escapes (either case), and '+' as a space when `plus_as_space`. False (and *out
// unspecified) on a '%' not followed by two hex digits.
bool percentDecode(std::string_view in, bool plus_as_space, std::string* out);

struct Url {
  std::string scheme;  // lower-cased, e.g. "rest"
  std::string host;    // without brackets for IPv6
  int port = 0;        // 0 when the URL has none
  std::string path;    // after the authority, without the leading '/' ("" when none)
  std::vector<std::pair<std::string, std::string>> params;  // query, in order, not decoded

  // The first value of query parameter `name`, or `def` when absent.
  std::string param(std::string_view name, std::string def = "") const;
  bool hasParam(std::string_view name) const;
};

// Parses an already-decoded URL. False with *error set ("missing '://'", "bad port '...'",
// ...) when it is not of the shape above. A port is required.
bool parseUrl(std::string_view text, Url* out, std::string* error);

}  // namespace sluice::zookeeper
