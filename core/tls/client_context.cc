#include "core/tls/client_context.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "core/config/address.h"
#include "core/tls/certificate.h"
#include "core/tls/tls_io.h"

namespace sluice::tls {
namespace {

// Where a new session for this SSL goes: its cache and host (SSL ex_data, freed with the SSL).
struct SessionSlot {
  std::shared_ptr<SessionCache> cache;
  std::string host;
};

int slotIndex() {
  static const int index = SSL_get_ex_new_index(
      0, nullptr, nullptr, nullptr, [](void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
        std::unique_ptr<SessionSlot> slot(static_cast<SessionSlot*>(ptr));
      });
  return index;
}

bool isIpLiteral(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

}  // namespace

SessionCache::~SessionCache() {
  for (auto& [host, s] : sessions_) SSL_SESSION_free(s);
}

SSL_SESSION* SessionCache::take(const std::string& host) const {
  auto it = sessions_.find(host);
  if (it == sessions_.end()) return nullptr;
  SSL_SESSION_up_ref(it->second);
  return it->second;
}

void SessionCache::put(const std::string& host, SSL_SESSION* session) {
  auto [it, inserted] = sessions_.emplace(host, session);
  if (!inserted) {
    SSL_SESSION_free(it->second);
    it->second = session;
  }
}

ClientContext::~ClientContext() { SSL_CTX_free(ctx_); }

std::shared_ptr<const ClientContext> ClientContext::create(const config::TlsClient& config,
                                                           const std::string& cluster,
                                                           std::vector<std::string>* errors) {
  const std::string where = config.mark.str() + ": cluster '" + cluster + "': tls ";
  std::shared_ptr<ClientContext> self(new ClientContext(config));
  self->ctx_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX* ctx = self->ctx_;
  if (ctx == nullptr) {
    errors->push_back(where + opensslError("cannot create an SSL context"));
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, config.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_ENABLE_PARTIAL_WRITE);
  SSL_CTX_set_read_ahead(ctx, 1);
  if (config.verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (!config.ca_file.empty()) {
      std::vector<std::unique_ptr<X509, X509Free>> cas;
      std::string error;
      if (!loadCaBundle(config.ca_file, &cas, &error)) {
        errors->push_back(where + "ca_file " + error);
        return nullptr;
      }
      X509_STORE* store = SSL_CTX_get_cert_store(ctx);
      for (auto& ca : cas) X509_STORE_add_cert(store, ca.get());
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
      errors->push_back(where + "cannot load the system CA store: " + opensslError("unknown"));
      return nullptr;
    }
  }
  if (!config.client_certificate.cert_chain.empty()) {
    Certificate cert;
    std::string error;
    if (!loadCertificate(config.client_certificate, &cert, &error)) {
      errors->push_back(where + error);
      return nullptr;
    }
    if (SSL_CTX_use_cert_and_key(ctx, cert.leaf.get(), cert.key.get(), cert.chain.get(), 1) != 1) {
      errors->push_back(where + "cert_chain " + cert.file + ": " + opensslError("unusable"));
      return nullptr;
    }
  }
  if (!config.alpn.empty()) {
    std::vector<unsigned char> wire;
    for (const std::string& p : config.alpn) {
      wire.push_back(static_cast<unsigned char>(p.size()));
      wire.insert(wire.end(), p.begin(), p.end());
    }
    SSL_CTX_set_alpn_protos(ctx, wire.data(), static_cast<unsigned int>(wire.size()));
  }
  // Sessions are kept by our per-worker caches, not OpenSSL's internal (locked) one.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, &ClientContext::onNewSession);
  slotIndex();
  return self;
}

int ClientContext::onNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* slot = static_cast<SessionSlot*>(SSL_get_ex_data(ssl, slotIndex()));
  if (slot == nullptr || slot->cache == nullptr) return 0;
  slot->cache->put(slot->host, session);
  return 1;  // we keep the reference
}

std::unique_ptr<event::TransportIo> ClientContext::newIo(
    const std::string& host_address, std::shared_ptr<SessionCache> cache) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  SSL_set_connect_state(ssl);
  std::string host = host_address;
  uint16_t port = 0;
  config::splitHostPort(host_address, &host, &port, nullptr);
  const std::string& name = config_.sni.empty() ? host : config_.sni;
  if (!isIpLiteral(name)) {
    SSL_set_tlsext_host_name(ssl, name.c_str());  // RFC 6066 §3: no IP literals in SNI
    if (config_.verify) SSL_set1_host(ssl, name.c_str());
  } else if (config_.verify) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
  }
  if (cache != nullptr) {
    if (SSL_SESSION* s = cache->take(host_address)) {
      SSL_set_session(ssl, s);
      SSL_SESSION_free(s);
    }
    auto slot = std::make_unique<SessionSlot>(SessionSlot{std::move(cache), host_address});
    SSL_set_ex_data(ssl, slotIndex(), slot.release());  // freed with the SSL (slotIndex)
  }
  // The context stays alive while the connection lives (SSL_new took a reference to ctx_,
  // and nothing of ours is reached from its callbacks but the slot).
  return std::make_unique<TlsIo>(ssl, nullptr);
}

}  // namespace sluice::tls
