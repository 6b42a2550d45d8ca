#include "core/tls/certificate.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "absl/strings/escaping.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

namespace sluice::tls {
namespace {

struct FileClose {
  void operator()(FILE* f) const { fclose(f); }
};
using File = std::unique_ptr<FILE, FileClose>;

File openFile(const std::string& path, std::string* error) {
  File f(fopen(path.c_str(), "rb"));
  if (f == nullptr) *error = std::string("cannot read: ") + strerror(errno);
  return f;
}

int64_t asnTime(const ASN1_TIME* t) {
  struct tm tm {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

void collectNames(X509* x, std::vector<std::string>* names) {
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x, NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(sans, i);
      if (gn->type != GEN_DNS) continue;
      const ASN1_IA5STRING* s = gn->d.dNSName;
      names->push_back(lower(std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                         static_cast<size_t>(ASN1_STRING_length(s)))));
    }
    GENERAL_NAMES_free(sans);
  }
  if (!names->empty()) return;
  // No DNS SAN: the subject's CN (what clients did before SANs; RFC 6125 §6.4.4).
  X509_NAME* subject = X509_get_subject_name(x);
  int idx = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (idx < 0) return;
  const ASN1_STRING* cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, idx));
  names->push_back(lower(std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(cn)),
                                     static_cast<size_t>(ASN1_STRING_length(cn)))));
}

}  // namespace

std::string opensslError(const std::string& fallback) {
  unsigned long code = 0;
  unsigned long last = 0;
  while ((code = ERR_get_error()) != 0) last = code;
  if (last == 0) return fallback;
  const char* reason = ERR_reason_error_string(last);
  return reason != nullptr ? reason : fallback;
}

std::string contentDigest(const std::vector<std::string>& paths) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (ctx == nullptr || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return "";
  for (const std::string& path : paths) {
    EVP_DigestUpdate(ctx.get(), path.data(), path.size() + 1);  // with the NUL: a separator
    FILE* f = fopen(path.c_str(), "rb");
    if (f == nullptr) {
      EVP_DigestUpdate(ctx.get(), "\x01missing", 8);
      continue;
    }
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) EVP_DigestUpdate(ctx.get(), buf, n);
    fclose(f);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) return "";
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(md), len));
}

std::string formatTime(int64_t unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool loadCaBundle(const std::string& path, std::vector<std::unique_ptr<X509, X509Free>>* out,
                  std::string* error) {
  std::string why;
  File f = openFile(path, &why);
  if (f == nullptr) {
    *error = path + ": " + why;
    return false;
  }
  ERR_clear_error();
  while (X509* x = PEM_read_X509(f.get(), nullptr, nullptr, nullptr)) out->emplace_back(x);
  unsigned long err = ERR_peek_last_error();
  if (err != 0 &&
      !(ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE)) {
    *error = path + ": bad PEM: " + opensslError("unreadable");
    return false;
  }
  ERR_clear_error();
  if (out->empty()) {
    *error = path + ": no PEM certificate in the file";
    return false;
  }
  return true;
}

bool loadCertificate(const config::TlsCertificate& ref, Certificate* out, std::string* error) {
  std::vector<std::unique_ptr<X509, X509Free>> certs;
  if (!loadCaBundle(ref.cert_chain, &certs, error)) {
    *error = "cert_chain " + *error;
    return false;
  }
  out->file = ref.cert_chain;
  out->leaf = std::move(certs[0]);
  out->chain.reset(sk_X509_new_null());
  for (size_t i = 1; i < certs.size(); ++i) sk_X509_push(out->chain.get(), certs[i].release());

  std::string why;
  File kf = openFile(ref.private_key, &why);
  if (kf == nullptr) {
    *error = "private_key " + ref.private_key + ": " + why;
    return false;
  }
  ERR_clear_error();
  out->key.reset(PEM_read_PrivateKey(kf.get(), nullptr, nullptr, nullptr));
  if (out->key == nullptr) {
    *error = "private_key " + ref.private_key + ": no usable PEM private key (" +
             opensslError("unreadable") + "; encrypted keys are not supported)";
    return false;
  }
  if (X509_check_private_key(out->leaf.get(), out->key.get()) != 1) {
    ERR_clear_error();
    *error =
        "private_key " + ref.private_key + " does not match the certificate in " + ref.cert_chain;
    return false;
  }
  switch (EVP_PKEY_get_base_id(out->key.get())) {
    case EVP_PKEY_RSA:
      out->key_type = "RSA";
      break;
    case EVP_PKEY_EC:
      out->key_type = "EC";
      break;
    case EVP_PKEY_ED25519:
      out->key_type = "Ed25519";
      break;
    default:
      out->key_type = "other";
  }
  collectNames(out->leaf.get(), &out->names);
  out->not_before = asnTime(X509_get0_notBefore(out->leaf.get()));
  out->not_after = asnTime(X509_get0_notAfter(out->leaf.get()));
  return true;
}

}  // namespace sluice::tls
