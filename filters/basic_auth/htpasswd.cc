#include "filters/basic_auth/htpasswd.h"

#include <crypt.h>

#include <cstring>
#include <map>

#include "filters/auth_common/auth_common.h"

namespace sluice::filters::basic_auth {
namespace {

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// crypt's base64 alphabet ("./0-9A-Za-z").
bool isCryptChars(std::string_view s) {
  for (char c : s) {
    bool ok = c == '.' || c == '/' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
              (c >= 'a' && c <= 'z');
    if (!ok) return false;
  }
  return true;
}

// The checksum after the last '$' must have the length the method produces: a truncated or
// edited hash would otherwise load and then never match anything.
std::string checkTail(std::string_view hash, size_t length, const char* method) {
  size_t dollar = hash.rfind('$');
  std::string_view tail = hash.substr(dollar + 1);
  if (tail.size() != length || !isCryptChars(tail)) {
    return std::string("malformed ") + method + " hash (the checksum after the last '$' must be " +
           std::to_string(length) + " characters of ./0-9A-Za-z)";
  }
  return "";
}

}  // namespace

std::string checkHash(std::string_view hash) {
  if (hash.empty()) return "empty hash";
  if (startsWith(hash, "{SHA}")) {
    return "{SHA} hashes (unsalted SHA-1) are not supported; use bcrypt (htpasswd -B)";
  }
  if (startsWith(hash, "$apr1$")) {
    return "$apr1$ (Apache MD5) hashes are not supported by libcrypt; use bcrypt (htpasswd -B)";
  }
  if (startsWith(hash, "$1$")) return "$1$ (MD5-crypt) hashes are too weak; use bcrypt";
  if (hash[0] != '$') {
    return "not a crypt hash (plain-text passwords and DES crypt are refused; use bcrypt: "
           "htpasswd -B)";
  }
  std::string text(hash);
  int check = crypt_checksalt(text.c_str());
  // Debian's libxcrypt reports SHA-crypt as "legacy" but verifies it; the prefixes below are the
  // ones this filter accepts, whatever crypt_checksalt thinks of their age.
  bool bcrypt = startsWith(hash, "$2b$") || startsWith(hash, "$2y$") || startsWith(hash, "$2a$");
  bool sha = startsWith(hash, "$5$") || startsWith(hash, "$6$");
  bool yescrypt = startsWith(hash, "$y$") || startsWith(hash, "$gy$") || startsWith(hash, "$7$");
  if (!bcrypt && !sha && !yescrypt) {
    return "hash method '" + text.substr(0, text.find('$', 1) + 1) +
           "' is not supported (use bcrypt, SHA-crypt or yescrypt)";
  }
  if (check != CRYPT_SALT_OK && !(check == CRYPT_SALT_METHOD_LEGACY && sha)) {
    return "libcrypt cannot verify this hash (crypt_checksalt: " +
           std::string(check == CRYPT_SALT_INVALID ? "invalid" : "method disabled or legacy") + ")";
  }
  if (bcrypt) {
    // $2b$NN$ + 22 characters of salt + 31 of checksum.
    if (hash.size() != 60 || hash[6] != '$' || !isCryptChars(hash.substr(7))) {
      return "malformed bcrypt hash (expected $2b$NN$ and 53 characters of ./0-9A-Za-z)";
    }
    return "";
  }
  if (startsWith(hash, "$5$")) return checkTail(hash, 43, "SHA-256-crypt");
  if (startsWith(hash, "$6$")) return checkTail(hash, 86, "SHA-512-crypt");
  return checkTail(hash, 43, "yescrypt");
}

bool parseHtpasswd(std::string_view text, std::unordered_map<std::string, std::string>* users,
                   std::string* first_hash, std::string* error) {
  std::map<std::string, size_t> seen;  // user → line
  std::string_view rest = text;
  for (size_t line_no = 1; !rest.empty(); ++line_no) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!line.empty() && space(line.back())) line.remove_suffix(1);
    while (!line.empty() && space(line.front())) line.remove_prefix(1);
    if (line.empty() || line[0] == '#') continue;
    auto fail = [&](const std::string& why) {
      *error = std::to_string(line_no) + ": " + why;
      return false;
    };
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return fail("expected 'user:hash'");
    std::string user(line.substr(0, colon));
    std::string_view hash = line.substr(colon + 1);
    if (user.empty()) return fail("empty user name");
    if (user.size() > 256) return fail("user name longer than 256 bytes");
    for (char c : user) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return fail("user name with a control character");
      }
    }
    if (hash.find(':') != std::string_view::npos) {
      return fail("unexpected ':' after the hash (expected 'user:hash')");
    }
    if (std::string why = checkHash(hash); !why.empty()) {
      return fail("user '" + user + "': " + why);
    }
    auto [it, inserted] = seen.emplace(user, line_no);
    if (!inserted) {
      return fail("duplicate user '" + user + "' (first at line " + std::to_string(it->second) +
                  ")");
    }
    if (users->empty() && first_hash != nullptr) *first_hash = std::string(hash);
    users->emplace(std::move(user), std::string(hash));
  }
  return true;
}

Verifier::Verifier() : data_(std::make_unique<crypt_data>()) {}
Verifier::~Verifier() = default;

bool Verifier::verify(std::string_view password, const std::string& hash) {
  // crypt_rn takes NUL-terminated strings: a password with a NUL would be cut short there.
  if (password.find('\0') != std::string_view::npos) return false;
  std::string phrase(password);
  std::memset(data_.get(), 0, sizeof(crypt_data));  // as crypt(3) asks before each first use
  const char* out = crypt_rn(phrase.c_str(), hash.c_str(), data_.get(), sizeof(crypt_data));
  bool ok = out != nullptr && auth::constantTimeEqual(out, hash);
  // Do not leave the password's derivatives in the scratch space.
  std::memset(data_.get(), 0, sizeof(crypt_data));
  std::fill(phrase.begin(), phrase.end(), '\0');
  return ok;
}

}  // namespace sluice::filters::basic_auth
