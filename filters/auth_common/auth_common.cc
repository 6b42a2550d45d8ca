#include "filters/auth_common/auth_common.h"

#include "filters/common/form.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sluice::filters::auth {
namespace {

bool isBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// SHA-256 fetched from the default provider once per process (per loaded copy of the plugin)
// instead of per call: with the EVP_sha256() placeholder, OpenSSL 3 looks the implementation up
// in its method store (a hash table under a read-write lock, plus a strndup) on every
// EVP_Digest, which doubled the cost of hashing a short key (~300 -> ~165 ns here). Freed when
// the plugin is unloaded (the static's destructor runs at dlclose).
class FetchedSha256 {
 public:
  FetchedSha256() : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)) {}
  ~FetchedSha256() { EVP_MD_free(md_); }
  FetchedSha256(const FetchedSha256&) = delete;
  FetchedSha256& operator=(const FetchedSha256&) = delete;
  // The fetched digest, or the implicit-fetch placeholder if the fetch failed.
  const EVP_MD* get() const { return md_ != nullptr ? md_ : EVP_sha256(); }

 private:
  EVP_MD* md_;
};

const EVP_MD* sha256Md() {
  static const FetchedSha256 md;  // thread-safe initialisation (C++11)
  return md.get();
}

}  // namespace

Digest sha256(std::string_view data) {
  Digest out{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, sha256Md(), nullptr) != 1) {
    // Cannot happen with the default provider; a zero digest never equals a real one's use.
    out.fill(0);
  }
  return out;
}

std::pair<uint64_t, uint64_t> randomSipKey() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) throw std::runtime_error("RAND_bytes failed");
  return {loadLe64(bytes), loadLe64(bytes + 8)};
}

bool digestEqual(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool constantTimeEqual(std::string_view a, std::string_view b) {
  return digestEqual(sha256(a), sha256(b));
}

bool constantTimeEqualBytes(const char* a, const char* b, size_t len) {
  // The differences of every word are or-ed together and looked at once, at the end. The empty
  // asm makes `diff` opaque to the optimiser at each step, so it cannot turn the loop into one
  // that stops at the first difference.
  uint64_t diff = 0;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t x = 0;
    uint64_t y = 0;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    diff |= x ^ y;
    __asm__("" : "+r"(diff));
  }
  for (; i < len; ++i) {
    diff |=
        static_cast<uint64_t>(static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]));
    __asm__("" : "+r"(diff));
  }
  return diff == 0;
}

std::optional<std::string> base64Decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  if (!in.empty() && in.back() == '=') pad = in.size() >= 2 && in[in.size() - 2] == '=' ? 2 : 1;
  for (size_t i = 0; i < in.size() - pad; ++i) {
    if (!isBase64Char(in[i])) return std::nullopt;
  }
  if (in.empty()) return std::string();
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0 || static_cast<size_t>(n) != out.size()) return std::nullopt;
  out.resize(out.size() - pad);  // EVP_DecodeBlock counts the padding as zero bytes
  return out;
}

std::optional<std::string> base64UrlDecode(std::string_view in) {
  if (in.size() % 4 == 1) return std::nullopt;
  std::string std64;
  std64.reserve(in.size() + 3);
  for (char c : in) {
    if (c == '-') {
      std64.push_back('+');
    } else if (c == '_') {
      std64.push_back('/');
    } else if (c == '+' || c == '/' || !isBase64Char(c)) {
      return std::nullopt;
    } else {
      std64.push_back(c);
    }
  }
  while (std64.size() % 4 != 0) std64.push_back('=');
  std::optional<std::string> out = base64Decode(std64);
  // Canonical only: unused low bits of the last character must be zero, so one byte string has
  // exactly one encoding (a JWS signature cannot be re-encoded into a different token string).
  if (out && base64UrlEncode(*out) != in) return std::nullopt;
  return out;
}

std::string base64UrlEncode(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::optional<std::string> percentDecode(std::string_view in) {
  return common::formDecode(in, common::BadEscape::kRefuse);
}

QueryValue queryParam(std::string_view target, std::string_view name) {
  QueryValue result;
  size_t q = target.find('?');
  if (q == std::string_view::npos) return result;
  std::string_view query = target.substr(q + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = pair.find('=');
    std::optional<std::string> key = percentDecode(pair.substr(0, eq));
    if (!key || *key != name) continue;
    result.present = true;
    std::optional<std::string> value =
        eq == std::string_view::npos ? std::string() : percentDecode(pair.substr(eq + 1));
    if (value) {
      result.value = std::move(*value);
    } else {
      result.malformed = true;
    }
    return result;
  }
  return result;
}

std::string readConfigFile(const sdk::ConfigNode& node, size_t max_bytes, std::string* resolved) {
  std::string written = node.asString();
  if (written.empty()) node.fail("empty file path");
  std::string path = node.resolvePath(written);
  if (resolved != nullptr) *resolved = path;
  {
    // For the reason in the message (dependsOnFile only says it cannot read the file).
    std::ifstream probe(path, std::ios::binary);
    if (!probe) node.fail("cannot open '" + path + "': " + std::strerror(errno));
  }
  // The digest before the bytes: if the file changes in between, the digest is the older one and
  // the next reload rebuilds once more (the other order could miss a change for good).
  node.dependsOnFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) node.fail("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) node.fail("cannot read '" + path + "'");
  std::string data = buf.str();
  if (data.size() > max_bytes) {
    node.fail("'" + path + "' is larger than " + std::to_string(max_bytes) + " bytes");
  }
  return data;
}

std::string removeQueryParam(std::string_view target, std::string_view name) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return std::string(target);
  size_t hash = target.find('#', q);
  std::string_view query =
      target.substr(q + 1, hash == std::string_view::npos ? hash : hash - q - 1);
  std::string_view fragment =
      hash == std::string_view::npos ? std::string_view() : target.substr(hash);
  std::string kept;
  bool removed = false;
  bool any_kept = false;
  while (true) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    std::optional<std::string> decoded = percentDecode(pair.substr(0, pair.find('=')));
    if (decoded && *decoded == name) {
      removed = true;
    } else {
      if (any_kept) kept += '&';
      kept += pair;
      any_kept = true;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  if (!removed) return std::string(target);
  std::string out(target.substr(0, q));
  if (!kept.empty()) out += "?" + kept;
  out += fragment;
  return out;
}

bool stripCredential(sdk::Stream& stream, bool strip, const sdk::HeaderName& header,
                     bool from_query, std::string_view query_param) {
  if (!strip) return true;
  if (!header.empty()) stream.removeHeader(sdk::HeaderMap::kRequest, header);
  return !from_query || stripQueryCredential(stream, query_param);
}

bool stripQueryCredential(sdk::Stream& stream, std::string_view name) {
  std::string_view now = stream.upstreamPath();
  if (now.empty()) return true;  // not routed: nothing goes upstream
  std::string next = removeQueryParam(now, name);
  if (next == now) return true;
  return stream.setUpstreamPath(next);
}

std::string headerNameKey(const sdk::ConfigNode& map, const char* key, const std::string& def,
                          bool allow_empty) {
  sdk::ConfigNode n = map[key];
  if (n.isNull()) return def;
  std::string v = n.asString();
  if (v.empty() && allow_empty) return v;
  if (!sdk::isHeaderName(v)) n.fail("'" + v + "' is not a header name");
  if (v.size() > sdk::kMaxHeaderNameBytes) n.fail("header name longer than 256 bytes");
  return v;
}

std::string quoteEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) continue;
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::string unauthorizedBody(std::string_view reason) {
  return "{\"error\":\"unauthorized\",\"reason\":\"" + quoteEscape(reason) + "\"}";
}

sdk::FilterStatus replyUnauthorized(sdk::Stream& stream, std::string_view reason,
                                    std::string_view www_authenticate) {
  std::string body = unauthorizedBody(reason);
  if (www_authenticate.empty()) {
    stream.sendLocalReply(401, body, "application/json");
  } else {
    stream.sendLocalReply(401, body, "application/json", {{"WWW-Authenticate", www_authenticate}});
  }
  return sdk::FilterStatus::kStop;
}

void setConsumer(sdk::Stream& stream, std::string_view consumer, std::string_view method,
                 const sdk::HeaderName& header) {
  if (!consumer.empty()) stream.setContext(kContextConsumer, consumer);
  stream.setContext(kContextMethod, method);
  // Appended: the callers removed the client's copies before authenticating (no scan).
  if (!header.empty() && !consumer.empty()) {
    stream.addHeader(sdk::HeaderMap::kRequest, header, consumer);
  }
}

DecisionCounters::DecisionCounters(const sdk::Host& host,
                                   std::initializer_list<std::string_view> reasons) {
  sdk::Metrics metrics(host);
  allowed_ = metrics.counter("allowed_total", "Requests admitted (credentials verified).");
  for (std::string_view reason : reasons) {
    std::string label(reason);
    for (char& c : label) c = c == ' ' ? '_' : c;
    denied_.emplace_back(
        std::string(reason),
        metrics.counter("denied_total", "Requests answered 401, by reason.", {{"reason", label}}));
  }
}

void DecisionCounters::denied(std::string_view reason) const {
  for (const auto& [r, counter] : denied_) {
    if (r == reason) {
      counter.inc();
      return;
    }
  }
}

}  // namespace sluice::filters::auth
