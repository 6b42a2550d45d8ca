#include "test/fuzz/mutator.h"

#include <algorithm>
#include <string_view>

namespace sluice::fuzz {
namespace {

// Bytes that mean something to an HTTP codec, a YAML reader or a byte-driven harness.
constexpr std::string_view kTokens[] = {
    "\r\n",
    "\n",
    "\r",
    " ",
    "\t",
    ":",
    ",",
    ";",
    "0",
    "1",
    "f",
    "\x00",
    "\x7f",
    "\xff",
    "\r\n\r\n",
    "chunked",
    "Host: a\r\n",
    "Content-Length: ",
    "Transfer-Encoding: ",
    "HTTP/1.1",
    "HTTP/1.0",
    "0\r\n\r\n",
    "GET / HTTP/1.1\r\n",
    "HTTP/1.1 200 OK\r\n",
    "- ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    "#",
    "&a ",
    "*a",
    "\"",
    "'",
    "!!str ",
    "---\n",
    "18446744073709551616",
};
constexpr size_t kMaxSize = 8192;

}  // namespace

void Mutator::mutateOnce(std::string& s, const std::vector<std::string>& pool) {
  switch (below(8)) {
    case 0:  // flip a bit
      if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1u << below(8));
      break;
    case 1:  // overwrite a byte
      if (!s.empty()) s[below(s.size())] = static_cast<char>(rng_());
      break;
    case 2: {  // insert a token
      std::string_view t = kTokens[below(std::size(kTokens))];
      s.insert(below(s.size() + 1), t.data(), t.size());
      break;
    }
    case 3:  // erase a range
      if (!s.empty()) {
        size_t at = below(s.size());
        s.erase(at, 1 + below(std::min<size_t>(16, s.size() - at)));
      }
      break;
    case 4:  // duplicate a range
      if (!s.empty()) {
        size_t at = below(s.size());
        std::string piece = s.substr(at, 1 + below(64));
        s.insert(below(s.size() + 1), piece);
      }
      break;
    case 5: {  // splice: our prefix, another input's suffix
      const std::string& other = pool[below(pool.size())];
      s = s.substr(0, below(s.size() + 1)) + other.substr(below(other.size() + 1));
      break;
    }
    case 6:  // the leading control bytes (split points, options, worker index)
      for (size_t i = 0; i < std::min<size_t>(2, s.size()); ++i) {
        if (below(2) != 0) s[i] = static_cast<char>(rng_());
      }
      break;
    default:  // truncate
      s.resize(below(s.size() + 1));
      break;
  }
}

std::string Mutator::mutate(const std::string& base, const std::vector<std::string>& pool) {
  std::string s = base;
  for (size_t n = 1 + below(4); n > 0; --n) mutateOnce(s, pool);
  if (s.size() > kMaxSize) s.resize(kMaxSize);
  return s;
}

}  // namespace sluice::fuzz
