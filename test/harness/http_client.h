// A raw HTTP/1.1 client for tests: a blocking-style socket with timeouts that sends exactly the
// bytes a test writes and parses responses one at a time (llhttp, response mode).
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::test {

using Headers = std::vector<std::pair<std::string, std::string>>;

// One parsed response. `complete` says the whole message arrived; when it did not, `error` says
// why and the fields hold whatever was parsed (status 0 if not even the status line).
struct Response {
  int status = 0;
  std::string reason;
  int http_major = 0;
  int http_minor = 0;
  Headers headers;           // in arrival order, duplicates kept, values without surrounding OWS
  std::string body;          // de-chunked; left empty when ReadOptions::on_body is set
  uint64_t body_length = 0;  // body bytes received (de-chunked), also with on_body
  bool chunked = false;      // framed with Transfer-Encoding: chunked
  bool keep_alive = false;   // the framing and Connection header allow another response
  bool complete = false;
  std::string error;  // "" when complete; else "timeout", "connection closed ...", parse error

  // First value of header `name` (case-insensitive), or "" when absent.
  std::string header(std::string_view name) const;
  // How many times header `name` (case-insensitive) occurs.
  size_t headerCount(std::string_view name) const;
};

// How to read one response.
struct ReadOptions {
  // The request was HEAD: the response has no body whatever its headers say.
  bool head_request = false;
  // If set, body bytes are passed here as they arrive instead of being kept in Response::body
  // (for huge bodies).
  std::function<void(std::string_view)> on_body;
};

// How a test connection speaks TLS (RawConnection::startTls).
struct TlsOptions {
  std::string sni;          // server name to send ("" = none)
  std::string ca_file;      // verify the server against this CA ("" = no verification)
  std::string verify_name;  // name to verify ("" = sni)
  std::string cert_chain;   // client certificate (PEM) and its key, optional
  std::string private_key;
  std::string max_version;  // "1.2" or "1.3" ("" = 1.3)
  std::string ciphers;      // TLS 1.2 cipher list ("" = OpenSSL's default)
  std::vector<std::string> alpn;
  SSL_SESSION* session = nullptr;  // offer this session for resumption (not taken)
};

// What the handshake gave.
struct TlsResult {
  bool ok = false;
  std::string error;    // why not ok (OpenSSL's reason, or "timeout")
  std::string version;  // "TLSv1.3"
  std::string alpn;
  std::string peer_cn;  // the server certificate's subject CN
  bool resumed = false;
};

// A TCP connection to 127.0.0.1:port. Every wait (connect, send, read) gives up after the
// inactivity timeout: no progress for that long. Reads keep unconsumed bytes, so pipelined
// responses are read one per readResponse() call.
class RawConnection {
 public:
  // Connects at once; check connected().
  explicit RawConnection(int port, int timeout_ms = 10000);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // Changes the inactivity timeout for later calls.
  void setTimeout(int timeout_ms) { timeout_ms_ = timeout_ms; }
  // Runs a TLS handshake on the connection; from then on send/read go through TLS.
  TlsResult startTls(const TlsOptions& options);
  // The TLS session (a new reference, SSL_SESSION_free it) for resumption, after some bytes
  // were read (TLS 1.3 tickets arrive after the handshake); nullptr without one.
  SSL_SESSION* tlsSession() const;
  // Sends all of `bytes`; false on error, peer reset or timeout.
  bool send(std::string_view bytes);
  // Reads the next response. 1xx interim responses are returned on their own; call again for
  // the final one.
  Response readResponse(const ReadOptions& options = {});
  // Everything received until the peer closes (or the timeout passes), including bytes
  // received but not yet consumed by readResponse().
  std::string readAll();
  // The next `n` bytes (those kept from earlier reads first), for protocols after an upgrade;
  // fewer when the peer closes or the timeout passes first.
  std::string readBytes(size_t n);
  // True when the peer has closed (FIN or reset) within `timeout_ms`. Bytes that arrive
  // meanwhile are kept for later reads.
  bool isClosed(int timeout_ms = 1000);
  // Half-closes: sends FIN, keeps reading possible.
  void shutdownWrite();
  // Closes the socket (also done by the destructor).
  void close();
  int fd() const { return fd_; }

 private:
  // Waits for and appends more bytes to buffer_. False on timeout (error_ = "timeout") or when
  // the peer closed (eof_ set).
  bool fill(int timeout_ms);

  // TLS-aware transfer of up to `len` bytes; <0 with errno on error (EAGAIN: would block,
  // *want_write says which way), 0 on EOF.
  long ioSend(const char* p, size_t len, bool* want_read);
  long ioRecv(char* p, size_t len, bool* want_write);

  int fd_ = -1;
  SSL_CTX* tls_ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int timeout_ms_;
  std::string buffer_;  // received, not yet consumed
  bool eof_ = false;
  std::string error_;
};

// The text of a request: "METHOD PATH HTTP/1.1", then `headers` in order. Adds
// "Host: 127.0.0.1:PORT" unless `headers` has a Host (pass port 0 to add none) and
// "Content-Length" when `body` is non-empty and `headers` has neither Content-Length nor
// Transfer-Encoding.
std::string buildRequest(const std::string& method, const std::string& path,
                         const Headers& headers = {}, const std::string& body = "", int port = 0);

// One request on a fresh connection with "Connection: close" (unless `headers` sets
// Connection); returns the response (read as a HEAD response for method HEAD).
Response httpRequest(int port, const std::string& method, const std::string& path,
                     const Headers& headers = {}, const std::string& body = "",
                     int timeout_ms = 10000);
// httpRequest(port, "GET", path, headers).
Response httpGet(int port, const std::string& path, const Headers& headers = {});

// Folds `data` into an FNV-1a 32-bit hash (the echo backend's body_fnv1a). Start value is the
// FNV offset basis; feed pieces in order to hash a stream.
uint32_t fnv1a(std::string_view data, uint32_t hash = 2166136261u);
// `n` bytes of the echo backend's /bytes pattern starting at stream offset `offset`
// (byte i is 'a' + i % 26).
std::string patternBytes(uint64_t offset, size_t n);
// 8 lowercase hex digits, as body_fnv1a is printed.
std::string hex8(uint32_t value);

}  // namespace sluice::test
