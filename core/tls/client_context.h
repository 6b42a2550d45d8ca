// A cluster's upstream TLS (the client side), built once per config snapshot on the main
// thread and shared by every worker: CA store (a file or the system's), verification of the
// endpoint's name (or the configured `sni`), an optional client certificate, ALPN, and session
// reuse across connections through a per-worker cache. Verification failures fail the
// connect, so they count as connect failures for retries.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/config/config.h"
#include "core/event/transport_io.h"

namespace sluice::tls {

// The last session each upstream host gave this worker, to resume the next connection with.
// One per worker per cluster (WorkerCluster); worker thread only. Shared with connections so
// a ticket arriving after the cluster was replaced still has somewhere to go.
class SessionCache {
 public:
  ~SessionCache();
  // A new reference to the session for `host` (the caller frees it), or nullptr.
  SSL_SESSION* take(const std::string& host) const;
  // Keeps `session` (takes the reference) for `host`, replacing the previous one.
  void put(const std::string& host, SSL_SESSION* session);
  size_t size() const { return sessions_.size(); }

 private:
  absl::flat_hash_map<std::string, SSL_SESSION*> sessions_;
};

class ClientContext {
 public:
  // For cluster `cluster` (its mark in `config`); nullptr with "file:line:col: ..." lines in
  // *errors when a file cannot be used.
  static std::shared_ptr<const ClientContext> create(const config::TlsClient& config,
                                                     const std::string& cluster,
                                                     std::vector<std::string>* errors);
  ~ClientContext();
  ClientContext(const ClientContext&) = delete;
  ClientContext& operator=(const ClientContext&) = delete;

  // The Io for a new connection to `host_address` ("name:port" as configured). The name (or
  // `sni`) is sent as SNI and verified against the certificate (an IP address is verified as
  // an IP SAN and sent no SNI). `cache` (may be null) offers and receives sessions. Worker
  // thread. nullptr when OpenSSL cannot make an SSL.
  std::unique_ptr<event::TransportIo> newIo(const std::string& host_address,
                                            std::shared_ptr<SessionCache> cache) const;
  const config::TlsClient& config() const { return config_; }

 private:
  explicit ClientContext(const config::TlsClient& config) : config_(config) {}
  static int onNewSession(SSL* ssl, SSL_SESSION* session);

  config::TlsClient config_;
  SSL_CTX* ctx_ = nullptr;
};

}  // namespace sluice::tls
