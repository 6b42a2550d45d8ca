// htpasswd files for basic_auth: parsing (with the reasons a line is refused) and password
// verification through libcrypt (libxcrypt: crypt_rn, crypt_checksalt).
//
// Accepted hash methods, as libcrypt names them: bcrypt ($2b$, $2y$, $2a$ — what `htpasswd -B`
// writes), SHA-crypt ($5$, $6$ — `mkpasswd -m sha-512`), yescrypt ($y$, Debian's default for
// system passwords), gost-yescrypt ($gy$) and scrypt ($7$). Refused, with the reason: plain text,
// {SHA} (unsalted SHA-1), $apr1$ (Apache's MD5, which libcrypt does not implement), MD5-crypt
// ($1$), DES crypt and anything else crypt_checksalt does not accept.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

struct crypt_data;  // <crypt.h>

namespace sluice::filters::basic_auth {

// Why `hash` cannot be verified (a sentence for the config error), or "" when it can.
std::string checkHash(std::string_view hash);

// Parses htpasswd text: `user:hash` a line, '#' comments and blank lines ignored, CR LF line ends
// accepted, surrounding whitespace of a line trimmed. On error returns false with `error` =
// "<line>: <reason>" (1-based line). User names: 1..256 bytes without ':' or control
// characters; duplicates refused.
bool parseHtpasswd(std::string_view text, std::unordered_map<std::string, std::string>* users,
                   std::string* first_hash, std::string* error);

// One worker's libcrypt scratch space (struct crypt_data is about 32 KiB). Worker thread only.
class Verifier {
 public:
  Verifier();
  ~Verifier();
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;
  // True when crypt_rn(password, hash) reproduces `hash` (compared in constant time). Takes
  // what the method costs: tens of ms for bcrypt at cost 10-12.
  bool verify(std::string_view password, const std::string& hash);

 private:
  std::unique_ptr<crypt_data> data_;
};

}  // namespace sluice::filters::basic_auth
