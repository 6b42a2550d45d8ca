#include "core/tls/ticket_keys.h"

#include <openssl/core_names.h>
#include <openssl/rand.h>

#include <chrono>
#include <cstring>
#include <map>

namespace sluice::tls {
namespace {

int exIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::shared_ptr<TicketKeys> TicketKeys::forListener(const std::string& listener,
                                                    uint32_t rotation_s) {
  // Main thread only (config builds); the stores themselves are thread-safe.
  static std::map<std::string, std::shared_ptr<TicketKeys>> stores;
  auto& slot = stores[listener];
  if (slot == nullptr) {
    slot = std::make_shared<TicketKeys>(rotation_s);
  } else {
    slot->setRotation(rotation_s);
  }
  return slot;
}

TicketKeys::TicketKeys(uint32_t rotation_s) : rotation_s_(rotation_s) {}

void TicketKeys::setRotation(uint32_t rotation_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  rotation_s_ = rotation_s;
}

uint64_t TicketKeys::rotations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rotations_;
}

void TicketKeys::install(SSL_CTX* ctx) {
  SSL_CTX_set_ex_data(ctx, exIndex(), this);
  SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, &TicketKeys::onTicket);
}

void TicketKeys::maybeRotateLocked(int64_t now_ms) {
  if (current_.valid && now_ms - current_.created_ms < int64_t{rotation_s_} * 1000) return;
  Key next{};
  if (RAND_bytes(next.name, sizeof(next.name)) != 1 ||
      RAND_bytes(next.aes, sizeof(next.aes)) != 1 ||
      RAND_bytes(next.hmac, sizeof(next.hmac)) != 1) {
    return;  // keep the old key rather than use a weak one
  }
  next.created_ms = now_ms;
  next.valid = true;
  if (current_.valid) ++rotations_;
  previous_ = current_;
  current_ = next;
}

// OpenSSL's ticket callback: encrypt = 1 to issue a ticket, 0 to open one. Returns 1 to use
// the key, 2 (open only) to accept the ticket but issue a fresh one, 0 for "unknown key: full
// handshake", -1 on error. Runs on the worker doing the handshake.
int TicketKeys::onTicket(SSL* ssl, unsigned char* key_name, unsigned char* iv,
                         EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int encrypt) {
  auto* self = static_cast<TicketKeys*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), exIndex()));
  if (self == nullptr) return encrypt ? -1 : 0;  // every context of a listener has it
  Key key{};
  int result = 1;
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->maybeRotateLocked(nowMs());
    if (encrypt) {
      key = self->current_;
    } else if (self->current_.valid && memcmp(key_name, self->current_.name, 16) == 0) {
      key = self->current_;
      // TLS 1.3 clients use a ticket once (RFC 8446 §C.4): without a fresh one on every
      // resumption, every other connection would be a full handshake.
      if (SSL_version(ssl) == TLS1_3_VERSION) result = 2;
    } else if (self->previous_.valid && memcmp(key_name, self->previous_.name, 16) == 0) {
      key = self->previous_;
      result = 2;  // still good, but issue a ticket under the current key
    } else {
      return 0;
    }
  }
  if (!key.valid) return encrypt ? -1 : 0;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key.hmac, sizeof(key.hmac)),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_end()};
  if (encrypt) {
    memcpy(key_name, key.name, 16);
    if (RAND_bytes(iv, EVP_CIPHER_get_iv_length(EVP_aes_256_cbc())) != 1) return -1;
    if (EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes, iv) != 1) return -1;
  } else if (EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes, iv) != 1) {
    return -1;
  }
  if (EVP_MAC_CTX_set_params(mac, params) != 1) return -1;
  return result;
}

}  // namespace sluice::tls
