// Certificates and keys from PEM files, checked the way an operator needs at 3 a.m.: a missing
// file, a file with no certificate, bad PEM, or a key that does not belong to the certificate is
// an error naming the file and the reason. Main thread (config build).
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"

namespace sluice::tls {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct ChainFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};

struct Certificate {
  std::unique_ptr<X509, X509Free> leaf;
  std::unique_ptr<STACK_OF(X509), ChainFree> chain;  // intermediates, may be empty
  std::unique_ptr<EVP_PKEY, PkeyFree> key;
  std::vector<std::string> names;  // DNS SANs (lowercase), or the CN when there are none
  int64_t not_before = 0;          // Unix seconds
  int64_t not_after = 0;
  std::string key_type;  // "RSA", "EC", ... (one certificate per type may serve a name)
  std::string file;      // the cert_chain path, for messages and metrics
};

// Loads `ref` (cert_chain + private_key). False with *error ("cert_chain /x.pem: ...") when the
// files cannot be read, hold no certificate, are not valid PEM, or the key does not match.
bool loadCertificate(const config::TlsCertificate& ref, Certificate* out, std::string* error);

// Reads every certificate of a PEM bundle (a CA file). False with *error when there is none.
bool loadCaBundle(const std::string& path, std::vector<std::unique_ptr<X509, X509Free>>* out,
                  std::string* error);

// SHA-256 (hex) over the contents of `paths`, in order (a missing file counts as empty with a
// marker): a reload rebuilds a context whose files changed even when the config text did not.
// Empty when OpenSSL cannot compute it (out of memory): a file change is then not noticed.
std::string contentDigest(const std::vector<std::string>& paths);

// "2027-03-01T00:00:00Z" for Unix seconds.
std::string formatTime(int64_t unix_seconds);

// The most specific reason OpenSSL has queued, e.g. "bad end line" (and clears the queue);
// `fallback` when it has none.
std::string opensslError(const std::string& fallback);

}  // namespace sluice::tls
