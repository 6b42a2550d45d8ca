// TLS under the Transport: OpenSSL over the connection's socket (socket BIO), non-blocking,
// records read ahead in batches and written at most 16 KiB at a time. Server side (accepted
// downstream connections) or client side (upstream connections). Worker thread only.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/event/transport_io.h"

namespace sluice::tls {

// Facts of an established TLS connection, for headers, filters and the access log.
struct ConnectionInfo {
  std::string version;  // "TLSv1.3"
  std::string cipher;
  std::string sni;   // server name the client sent ("" when none)
  std::string alpn;  // negotiated protocol ("" when none)
  bool resumed = false;
  // Verified peer certificate (empty when none was presented).
  std::string peer_subject;      // RFC 2253
  std::string peer_uri_sans;     // comma-separated
  std::string peer_dns_sans;     // comma-separated
  std::string peer_fingerprint;  // SHA-256 of the DER, lowercase hex
};

// Why a handshake failed, as a bounded label set for metrics.
enum class HandshakeFailure {
  kNone,
  kProtocol,    // version or cipher mismatch, not TLS at all
  kUnknownSni,  // strict_sni refused the name
  kAlpn,        // no common application protocol
  kPeerCert,    // client (or upstream) certificate missing or not verified
  kPeerClosed,  // the peer went away mid-handshake
  kTimeout,     // handshake_timeout_ms passed
  kOther,
};
const char* failureLabel(HandshakeFailure f);
constexpr int kHandshakeFailureCount = static_cast<int>(HandshakeFailure::kOther) + 1;

class TlsIo final : public event::TransportIo {
 public:
  // Takes `ssl` (its accept or connect state set). `keep_alive` keeps the context the SSL
  // came from (and its callbacks' state) alive for the connection's life.
  TlsIo(SSL* ssl, std::shared_ptr<const void> keep_alive);
  ~TlsIo() override;

  event::IoStatus handshake(int fd) override;
  event::IoStatus read(int fd, const iovec* iov, int n_iov, size_t* n) override;
  event::IoStatus write(int fd, evbuffer* out) override;
  bool hasPending() const override;
  void shutdown(int fd) override;
  bool idleAndOpen(int fd) override;
  const std::string& lastError() const override { return error_; }

  SSL* ssl() const { return ssl_; }
  HandshakeFailure failure() const { return failure_; }
  // Fills `out` from the established connection; `peer_details` also extracts the peer
  // certificate's subject, SANs and fingerprint (a few µs: only where they are forwarded).
  void describe(ConnectionInfo* out, bool peer_details) const;

 private:
  // Maps SSL_get_error() after a call that returned `ret`.
  event::IoStatus status(int ret, const char* what);

  SSL* ssl_;
  std::shared_ptr<const void> keep_alive_;
  std::string error_;
  HandshakeFailure failure_ = HandshakeFailure::kNone;
  bool fd_set_ = false;
  bool eof_ = false;         // close_notify seen: report EOF once the data before it is out
  bool tls_failed_ = false;  // a TLS protocol error: the session must not be resumed
};

}  // namespace sluice::tls
