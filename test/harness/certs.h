// A throw-away PKI for TLS tests, made with OpenSSL at test time (no key material is committed):
// a CA, and server or client certificates it signs, with the names, key type and validity
// window a test needs (expired and not-yet-valid ones included). Files go under testTmpDir().
#pragma once

#include <string>
#include <vector>

namespace sluice::test {

struct CertFiles {
  std::string cert;  // PEM: the leaf, then the CA (a chain as servers send it)
  std::string key;   // PEM private key
};

struct CertOptions {
  enum class Key { kEcdsaP256, kRsa2048 };
  std::vector<std::string> dns;   // DNS subjectAltNames ("*.example.test" allowed)
  std::vector<std::string> ips;   // IP subjectAltNames
  std::vector<std::string> uris;  // URI subjectAltNames (e.g. spiffe://...)
  std::string common_name;        // subject CN ("" = the first DNS name)
  Key key = Key::kEcdsaP256;
  long valid_from_s = -3600;        // relative to now
  long valid_until_s = 30 * 86400;  // relative to now (negative: already expired)
  bool client = false;              // extendedKeyUsage clientAuth instead of serverAuth
};

class TestPki {
 public:
  // Makes a CA called `name` (ECDSA P-256); its certificate is written to caFile().
  explicit TestPki(const std::string& name = "sluice test CA");
  const std::string& caFile() const { return ca_file_; }
  // Issues a certificate signed by the CA; ADD_FAILUREs and returns empty paths on error.
  CertFiles issue(const std::string& name, const CertOptions& options) const;

 private:
  std::string name_;
  std::string ca_file_;
  std::string ca_key_pem_;
  std::string ca_cert_pem_;
};

}  // namespace sluice::test
