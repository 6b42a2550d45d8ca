// The TLS half of RawConnection (test/harness/http_client.h): a blocking-style handshake over
// the non-blocking socket (poll with the connection's timeout), then SSL_read/SSL_write.
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <csignal>

#include "test/harness/http_client.h"

namespace sluice::test {
namespace {

std::string lastOpensslError(SSL* ssl, int ret) {
  unsigned long code = ERR_get_error();
  std::string out;
  if (code != 0) {
    const char* reason = ERR_reason_error_string(code);
    out = reason != nullptr ? reason : "TLS error";
  } else {
    out = "TLS error " + std::to_string(SSL_get_error(ssl, ret));
  }
  ERR_clear_error();
  return out;
}

}  // namespace

TlsResult RawConnection::startTls(const TlsOptions& o) {
  TlsResult result;
  if (fd_ < 0) {
    result.error = "not connected";
    return result;
  }
  tls_ctx_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(tls_ctx_, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(tls_ctx_, o.max_version == "1.2" ? TLS1_2_VERSION : TLS1_3_VERSION);
  if (!o.ciphers.empty()) SSL_CTX_set_cipher_list(tls_ctx_, o.ciphers.c_str());
  if (!o.ca_file.empty()) {
    SSL_CTX_load_verify_locations(tls_ctx_, o.ca_file.c_str(), nullptr);
    SSL_CTX_set_verify(tls_ctx_, SSL_VERIFY_PEER, nullptr);
  }
  if (!o.cert_chain.empty()) {
    if (SSL_CTX_use_certificate_chain_file(tls_ctx_, o.cert_chain.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(tls_ctx_, o.private_key.c_str(), SSL_FILETYPE_PEM) != 1) {
      result.error = "cannot load the client certificate";
      return result;
    }
  }
  // No client cache: freeing a context marks the sessions in its cache not resumable, which
  // would spoil a session a test offers on its next connection (each has its own context).
  SSL_CTX_set_session_cache_mode(tls_ctx_, SSL_SESS_CACHE_OFF);
  if (!o.alpn.empty()) {
    std::string wire;
    for (const auto& p : o.alpn) wire += static_cast<char>(p.size()) + p;
    SSL_CTX_set_alpn_protos(tls_ctx_, reinterpret_cast<const unsigned char*>(wire.data()),
                            static_cast<unsigned>(wire.size()));
  }
  // OpenSSL's socket BIO writes with write(2): a peer that closed would end the test process
  // with SIGPIPE (no failure message, no gateway log). Ignored once per process: a closed peer
  // then shows up as a failed send, reported by the test.
  static const bool sigpipe_ignored = (std::signal(SIGPIPE, SIG_IGN), true);
  (void)sigpipe_ignored;
  ssl_ = SSL_new(tls_ctx_);
  SSL_set_fd(ssl_, fd_);
  if (!o.sni.empty()) SSL_set_tlsext_host_name(ssl_, o.sni.c_str());
  std::string verify = o.verify_name.empty() ? o.sni : o.verify_name;
  if (!o.ca_file.empty() && !verify.empty()) SSL_set1_host(ssl_, verify.c_str());
  if (o.session != nullptr) SSL_set_session(ssl_, o.session);
  while (true) {
    ERR_clear_error();
    int r = SSL_connect(ssl_);
    if (r == 1) break;
    int err = SSL_get_error(ssl_, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      pollfd pfd{fd_, static_cast<short>(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
      if (::poll(&pfd, 1, timeout_ms_) <= 0) {
        result.error = "timeout";
        return result;
      }
      continue;
    }
    result.error = lastOpensslError(ssl_, r);
    long v = SSL_get_verify_result(ssl_);
    if (v != X509_V_OK) result.error += std::string(": ") + X509_verify_cert_error_string(v);
    return result;
  }
  result.ok = true;
  result.version = SSL_get_version(ssl_);
  result.resumed = SSL_session_reused(ssl_) == 1;
  const unsigned char* alpn = nullptr;
  unsigned int alpn_len = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpn_len);
  result.alpn.assign(reinterpret_cast<const char*>(alpn), alpn_len);
  if (X509* peer = SSL_get0_peer_certificate(ssl_)) {
    char cn[256] = "";
    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof(cn));
    result.peer_cn = cn;
  }
  return result;
}

SSL_SESSION* RawConnection::tlsSession() const {
  return ssl_ != nullptr ? SSL_get1_session(ssl_) : nullptr;
}

long RawConnection::ioSend(const char* p, size_t len, bool* want_read) {
  if (ssl_ == nullptr) return ::send(fd_, p, len, MSG_NOSIGNAL);
  ERR_clear_error();
  int r = SSL_write(ssl_, p, static_cast<int>(len));
  if (r > 0) return r;
  int err = SSL_get_error(ssl_, r);
  ERR_clear_error();
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    *want_read = err == SSL_ERROR_WANT_READ;
    errno = EAGAIN;
    return -1;
  }
  errno = ECONNRESET;
  return -1;
}

long RawConnection::ioRecv(char* p, size_t len, bool* want_write) {
  if (ssl_ == nullptr) return ::recv(fd_, p, len, 0);
  ERR_clear_error();
  int r = SSL_read(ssl_, p, static_cast<int>(len));
  if (r > 0) return r;
  int err = SSL_get_error(ssl_, r);
  ERR_clear_error();
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    *want_write = err == SSL_ERROR_WANT_WRITE;
    errno = EAGAIN;
    return -1;
  }
  if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && errno == 0)) return 0;
  errno = ECONNRESET;
  return -1;
}

}  // namespace sluice::test
