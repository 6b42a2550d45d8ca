// Session-ticket keys (RFC 5077 / RFC 8446 §4.6.1 tickets): one store per listener name, kept
// for the life of the process so reloads do not invalidate clients' tickets, and shared by every
// worker (they all use the listener's SSL_CTX). A new key is made every `rotation_s`; the
// previous one still decrypts (its tickets are renewed), so a ticket lives at most two periods.
// Thread-safe: handshakes on any worker lock the store briefly (never the request path).
#pragma once

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace sluice::tls {

class TicketKeys {
 public:
  // The store for `listener` (created on first use). `rotation_s` is the current setting; a
  // changed setting applies from the next rotation. Main thread (config build).
  static std::shared_ptr<TicketKeys> forListener(const std::string& listener, uint32_t rotation_s);

  explicit TicketKeys(uint32_t rotation_s);
  void setRotation(uint32_t rotation_s);
  // Installs the ticket callback on `ctx`; `this` must outlive the SSL objects made from it.
  void install(SSL_CTX* ctx);
  // Rotations so far (for tests and metrics).
  uint64_t rotations() const;

 private:
  struct Key {
    unsigned char name[16];
    unsigned char aes[32];
    unsigned char hmac[32];
    int64_t created_ms = 0;
    bool valid = false;
  };
  static int onTicket(SSL* ssl, unsigned char* key_name, unsigned char* iv, EVP_CIPHER_CTX* cipher,
                      EVP_MAC_CTX* mac, int encrypt);
  // Under mutex_: rotates when the current key is older than the period.
  void maybeRotateLocked(int64_t now_ms);

  mutable std::mutex mutex_;
  uint32_t rotation_s_;
  Key current_{};
  Key previous_{};
  uint64_t rotations_ = 0;
};

}  // namespace sluice::tls
