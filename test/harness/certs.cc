#include "test/harness/certs.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <memory>

#include "test/harness/env.h"

namespace sluice::test {
namespace {

struct Free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  void operator()(X509* x) const { X509_free(x); }
  void operator()(BIO* b) const { BIO_free(b); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

Key makeKey(CertOptions::Key type) {
  return Key(type == CertOptions::Key::kRsa2048 ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256"));
}

std::string pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string pem(X509* cert) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Key readKey(const std::string& text) {
  std::unique_ptr<BIO, Free> bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  return Key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

Cert readCert(const std::string& text) {
  std::unique_ptr<BIO, Free> bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  return Cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

bool addExt(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return true;
}

Cert makeCert(const std::string& cn, EVP_PKEY* key, X509* issuer, long from_s, long until_s) {
  static std::atomic<long> serial{1000};
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from_s);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), until_s);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("sluice tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : name);
  return cert;
}

}  // namespace

TestPki::TestPki(const std::string& name) : name_(name) {
  Key key = makeKey(CertOptions::Key::kEcdsaP256);
  Cert ca = makeCert(name, key.get(), nullptr, -86400, 365 * 86400);
  addExt(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
  addExt(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  addExt(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
  X509_sign(ca.get(), key.get(), EVP_sha256());
  ca_key_pem_ = pem(key.get());
  ca_cert_pem_ = pem(ca.get());
  ca_file_ = uniqueTmpPath("ca.pem");
  writeFile(ca_file_, ca_cert_pem_);
}

CertFiles TestPki::issue(const std::string& name, const CertOptions& o) const {
  Key ca_key = readKey(ca_key_pem_);
  Cert ca = readCert(ca_cert_pem_);
  Key key = makeKey(o.key);
  std::string cn = !o.common_name.empty() ? o.common_name : !o.dns.empty() ? o.dns[0] : name;
  Cert cert = makeCert(cn, key.get(), ca.get(), o.valid_from_s, o.valid_until_s);
  std::string san;
  for (const auto& d : o.dns) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& i : o.ips) san += (san.empty() ? "IP:" : ",IP:") + i;
  for (const auto& u : o.uris) san += (san.empty() ? "URI:" : ",URI:") + u;
  bool ok = true;
  if (!san.empty()) ok = ok && addExt(cert.get(), ca.get(), NID_subject_alt_name, san);
  ok = ok && addExt(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  ok =
      ok && addExt(cert.get(), ca.get(), NID_ext_key_usage, o.client ? "clientAuth" : "serverAuth");
  ok = ok && addExt(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
  ok = ok && X509_sign(cert.get(), ca_key.get(), EVP_sha256()) > 0;
  if (!ok) {
    ADD_FAILURE() << "cannot issue test certificate " << name;
    return {};
  }
  CertFiles files;
  files.cert = uniqueTmpPath(name + ".pem");
  files.key = uniqueTmpPath(name + ".key");
  writeFile(files.cert, pem(cert.get()) + ca_cert_pem_);
  writeFile(files.key, pem(key.get()));
  return files;
}

}  // namespace sluice::test
