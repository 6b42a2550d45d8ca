// A listener's TLS server side, built once per config snapshot on the main thread (DESIGN.md
// §10) and shared read-only by every worker: one SSL_CTX per group of certificates that serve
// the same names (an RSA and an ECDSA certificate side by side: OpenSSL picks by the client's
// signature algorithms), chosen by SNI — exact names first, then `*.example.com` wildcards
// (one label, RFC 6125 §6.4.3) — with the first certificate's group as the default.
// Connections hold a shared_ptr to the context they started with, so a reload swaps
// certificates for new connections only.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/config/config.h"
#include "core/tls/ticket_keys.h"

namespace sluice::tls {

// What a loaded certificate is, for logs, /stats and the expiry metric.
struct CertificateInfo {
  std::string file;
  std::vector<std::string> names;
  std::string key_type;
  int64_t not_after = 0;  // Unix seconds
};

class ServerContext {
 public:
  // Builds the contexts for listener `listener`. On failure returns nullptr and appends
  // "file:line:col: listener 'x': tls ..." lines to *errors. Expired or not-yet-valid
  // certificates are *warnings (errors with refuse_expired).
  static std::shared_ptr<const ServerContext> create(const config::TlsServer& config,
                                                     const std::string& listener,
                                                     std::vector<std::string>* errors,
                                                     std::vector<std::string>* warnings);
  ~ServerContext();
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  // A new server-side SSL for one connection (from the default context), or nullptr.
  // Worker thread; the caller owns it.
  SSL* newSsl() const;
  // The certificate group that serves `host` (lowercase or not; no port): its index, or -1
  // when none names it.
  int groupFor(std::string_view host) const;
  // The group an established connection's handshake chose (0 = default).
  static int groupOf(const SSL* ssl);
  const config::TlsServer& config() const { return config_; }
  const std::string& listener() const { return listener_; }
  const std::vector<CertificateInfo>& certificates() const { return certificates_; }
  bool verifiesClients() const { return config_.verify != config::TlsServer::Verify::kNone; }

 private:
  ServerContext(const config::TlsServer& config, std::string listener);
  static int onServerName(SSL* ssl, int* alert, void* arg);
  static int onAlpn(SSL* ssl, const unsigned char** out, unsigned char* outlen,
                    const unsigned char* in, unsigned int inlen, void* arg);
  bool configure(SSL_CTX* ctx, std::string* error);

  config::TlsServer config_;
  std::string listener_;
  std::vector<SSL_CTX*> groups_;                    // [0] is the default
  absl::flat_hash_map<std::string, int> exact_;     // name → group
  absl::flat_hash_map<std::string, int> wildcard_;  // "example.com" for "*.example.com"
  std::vector<CertificateInfo> certificates_;
  std::vector<unsigned char> alpn_wire_;  // the server's protocols, RFC 7301 wire format
  std::shared_ptr<TicketKeys> tickets_;
};

}  // namespace sluice::tls
