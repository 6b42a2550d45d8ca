#include "core/tls/tls_io.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include "absl/strings/escaping.h"

#include <cerrno>
#include <cstring>

namespace sluice::tls {
namespace {

constexpr size_t kRecordSize = 16 * 1024;  // a full TLS record's plaintext (RFC 8446 §5.1)

std::string hex(const unsigned char* p, size_t n) {
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(p), n));
}

void appendSans(X509* cert, ConnectionInfo* out) {
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans == nullptr) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(sans, i);
    std::string* list = gn->type == GEN_URI   ? &out->peer_uri_sans
                        : gn->type == GEN_DNS ? &out->peer_dns_sans
                                              : nullptr;
    if (list == nullptr) continue;
    const ASN1_IA5STRING* s = gn->type == GEN_URI ? gn->d.uniformResourceIdentifier : gn->d.dNSName;
    std::string value(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                      static_cast<size_t>(ASN1_STRING_length(s)));
    // Values go into a comma-separated header: drop anything that could break it.
    bool clean = true;
    for (char c : value) clean = clean && c > ' ' && c != ',' && c != 0x7f;
    if (!clean) continue;
    if (!list->empty()) list->append(",");
    list->append(value);
  }
  GENERAL_NAMES_free(sans);
}

}  // namespace

const char* failureLabel(HandshakeFailure f) {
  switch (f) {
    case HandshakeFailure::kNone:
      return "none";
    case HandshakeFailure::kProtocol:
      return "protocol";
    case HandshakeFailure::kUnknownSni:
      return "unknown_sni";
    case HandshakeFailure::kAlpn:
      return "alpn";
    case HandshakeFailure::kPeerCert:
      return "peer_certificate";
    case HandshakeFailure::kPeerClosed:
      return "peer_closed";
    case HandshakeFailure::kTimeout:
      return "timeout";
    case HandshakeFailure::kOther:
      return "other";
  }
  return "other";
}

TlsIo::TlsIo(SSL* ssl, std::shared_ptr<const void> keep_alive)
    : ssl_(ssl), keep_alive_(std::move(keep_alive)) {}

TlsIo::~TlsIo() {
  // A connection that ends without a TLS error (the peer closed, an idle timeout) keeps its
  // session resumable: OpenSSL drops the session of an SSL freed before a close_notify was
  // sent, so every keep-alive client that just closes would lose it.
  if (!tls_failed_) SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(ssl_);
}

event::IoStatus TlsIo::status(int ret, const char* what) {
  int err = SSL_get_error(ssl_, ret);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      return event::IoStatus::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return event::IoStatus::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      ERR_clear_error();
      return event::IoStatus::kEof;
    case SSL_ERROR_SYSCALL: {
      int e = errno;
      ERR_clear_error();
      if (e == 0) return event::IoStatus::kEof;  // TCP close without close_notify
      if (e == EAGAIN || e == EINTR) return event::IoStatus::kWantRead;
      error_ = std::string(what) + ": " + strerror(e);
      return event::IoStatus::kError;
    }
    default: {
      tls_failed_ = true;
      unsigned long code = ERR_peek_last_error();
      const char* reason = code != 0 ? ERR_reason_error_string(code) : nullptr;
      error_ = std::string(what) + ": " + (reason != nullptr ? reason : "TLS error");
      long verify = SSL_get_verify_result(ssl_);
      if (verify != X509_V_OK) {
        error_ += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
      }
      ERR_clear_error();
      return event::IoStatus::kError;
    }
  }
}

event::IoStatus TlsIo::handshake(int fd) {
  if (!fd_set_) {
    SSL_set_fd(ssl_, fd);
    fd_set_ = true;
  }
  ERR_clear_error();
  int ret = SSL_do_handshake(ssl_);
  if (ret == 1) return event::IoStatus::kOk;
  unsigned long code = ERR_peek_last_error();
  event::IoStatus st = status(ret, "TLS handshake");
  if (st == event::IoStatus::kWantRead || st == event::IoStatus::kWantWrite) return st;
  if (st == event::IoStatus::kEof) {
    failure_ = HandshakeFailure::kPeerClosed;
    error_ = "TLS handshake: the peer closed the connection";
    return st;
  }
  int reason = code != 0 ? ERR_GET_REASON(code) : 0;
  if (SSL_get_verify_result(ssl_) != X509_V_OK ||
      reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE ||
      reason == SSL_R_CERTIFICATE_VERIFY_FAILED || reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA ||
      reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE) {
    failure_ = HandshakeFailure::kPeerCert;
  } else if (reason == SSL_R_CALLBACK_FAILED || reason == SSL_R_TLSV1_UNRECOGNIZED_NAME) {
    failure_ = HandshakeFailure::kUnknownSni;  // strict_sni's fatal alert (onServerName)
  } else if (reason == SSL_R_NO_APPLICATION_PROTOCOL ||
             reason == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL) {
    failure_ = HandshakeFailure::kAlpn;
  } else if (reason == SSL_R_UNSUPPORTED_PROTOCOL || reason == SSL_R_NO_SHARED_CIPHER ||
             reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_HTTP_REQUEST ||
             reason == SSL_R_VERSION_TOO_LOW || reason == SSL_R_TLSV1_ALERT_PROTOCOL_VERSION ||
             reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE || reason == SSL_R_NO_SHARED_GROUPS ||
             reason == SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM) {
    failure_ = HandshakeFailure::kProtocol;
  } else {
    failure_ = HandshakeFailure::kOther;
  }
  return st;
}

event::IoStatus TlsIo::read(int, const iovec* iov, int n_iov, size_t* n) {
  if (eof_) return event::IoStatus::kEof;
  size_t total = 0;
  for (int i = 0; i < n_iov; ++i) {
    size_t off = 0;
    while (off < iov[i].iov_len) {
      size_t len = iov[i].iov_len - off;
      if (len > INT32_MAX) len = INT32_MAX;
      ERR_clear_error();
      int r = SSL_read(ssl_, static_cast<char*>(iov[i].iov_base) + off, static_cast<int>(len));
      if (r > 0) {
        off += static_cast<size_t>(r);
        total += static_cast<size_t>(r);
        continue;
      }
      event::IoStatus st = status(r, "TLS read");
      if (total > 0) {
        // Deliver what arrived first; an end or error shows again on the next call.
        if (st == event::IoStatus::kEof) eof_ = true;
        *n = total;
        return event::IoStatus::kOk;
      }
      return st;
    }
  }
  *n = total;
  return event::IoStatus::kOk;
}

event::IoStatus TlsIo::write(int, evbuffer* out) {
  while (evbuffer_get_length(out) > 0) {
    size_t len = evbuffer_get_length(out);
    if (len > kRecordSize) len = kRecordSize;
    // One contiguous record's worth; a retry after WANT_WRITE passes at least as many bytes
    // (the buffer only grows at its end), as SSL_write requires.
    unsigned char* p = evbuffer_pullup(out, static_cast<ev_ssize_t>(len));
    if (p == nullptr) {
      error_ = "TLS write: out of memory";
      return event::IoStatus::kError;
    }
    ERR_clear_error();
    int r = SSL_write(ssl_, p, static_cast<int>(len));
    if (r > 0) {
      evbuffer_drain(out, static_cast<size_t>(r));
      continue;
    }
    event::IoStatus st = status(r, "TLS write");
    if (st == event::IoStatus::kEof) st = event::IoStatus::kError;
    return st;
  }
  return event::IoStatus::kOk;
}

bool TlsIo::hasPending() const { return eof_ || SSL_has_pending(ssl_) == 1; }

void TlsIo::shutdown(int) {
  if ((SSL_get_shutdown(ssl_) & SSL_SENT_SHUTDOWN) != 0) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // sends close_notify; we do not wait for the peer's
  ERR_clear_error();
}

bool TlsIo::idleAndOpen(int) {
  // Processes what arrived while idle (TLS 1.3 session tickets are fine; application bytes or a
  // close are not).
  char byte;
  ERR_clear_error();
  int r = SSL_peek(ssl_, &byte, 1);
  if (r > 0) return false;
  event::IoStatus st = status(r, "TLS peek");
  return st == event::IoStatus::kWantRead;
}

void TlsIo::describe(ConnectionInfo* out, bool peer_details) const {
  out->version = SSL_get_version(ssl_);
  out->cipher = SSL_get_cipher_name(ssl_);
  const char* sni = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
  out->sni = sni != nullptr ? sni : "";
  const unsigned char* alpn = nullptr;
  unsigned int alpn_len = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpn_len);
  out->alpn.assign(reinterpret_cast<const char*>(alpn), alpn_len);
  out->resumed = SSL_session_reused(ssl_) == 1;
  if (!peer_details) return;
  X509* peer = SSL_get0_peer_certificate(ssl_);
  if (peer == nullptr || SSL_get_verify_result(ssl_) != X509_V_OK) return;
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio != nullptr) {
    X509_NAME_print_ex(bio, X509_get_subject_name(peer), 0,
                       XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
    char* data = nullptr;
    long len = BIO_get_mem_data(bio, &data);
    std::string subject(data, static_cast<size_t>(len > 0 ? len : 0));
    // Into a header value: no control bytes (RFC 9110 §5.5).
    for (char& c : subject) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    out->peer_subject = std::move(subject);
    BIO_free(bio);
  }
  appendSans(peer, out);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (X509_digest(peer, EVP_sha256(), md, &md_len) == 1) out->peer_fingerprint = hex(md, md_len);
}

}  // namespace sluice::tls
