#include "core/tls/server_context.h"

#include <openssl/err.h>
#include <openssl/sha.h>

#include <algorithm>
#include <ctime>
#include <map>

#include "core/tls/certificate.h"

namespace sluice::tls {
namespace {

// Forward-secret AEAD suites only (TLS 1.2); TLS 1.3 keeps OpenSSL's default suites.
constexpr const char* kDefaultCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

int groupIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

ServerContext::ServerContext(const config::TlsServer& config, std::string listener)
    : config_(config), listener_(std::move(listener)) {}

ServerContext::~ServerContext() {
  for (SSL_CTX* ctx : groups_) SSL_CTX_free(ctx);
}

std::shared_ptr<const ServerContext> ServerContext::create(const config::TlsServer& config,
                                                           const std::string& listener,
                                                           std::vector<std::string>* errors,
                                                           std::vector<std::string>* warnings) {
  const size_t before = errors->size();
  auto where = [&](const config::Mark& mark) {
    return mark.str() + ": listener '" + listener + "': tls ";
  };
  std::shared_ptr<ServerContext> self(new ServerContext(config, listener));
  std::vector<Certificate> certs(config.certificates.size());
  const int64_t now = static_cast<int64_t>(time(nullptr));
  for (size_t i = 0; i < certs.size(); ++i) {
    const config::TlsCertificate& ref = config.certificates[i];
    std::string error;
    if (!loadCertificate(ref, &certs[i], &error)) {
      errors->push_back(where(ref.mark) + error);
      continue;
    }
    const Certificate& c = certs[i];
    std::string problem;
    if (now < c.not_before) problem = "is not valid before " + formatTime(c.not_before);
    if (now > c.not_after) problem = "expired on " + formatTime(c.not_after);
    if (!problem.empty()) {
      std::string line = where(ref.mark) + "certificate " + c.file + " " + problem;
      if (config.refuse_expired) {
        errors->push_back(line + " (refuse_expired is set)");
      } else {
        warnings->push_back(line + ": clients will refuse it");
      }
    }
    if (c.names.empty()) {
      errors->push_back(where(ref.mark) + "certificate " + c.file +
                        " names no host (no DNS subjectAltName, no CN)");
    }
    self->certificates_.push_back(CertificateInfo{c.file, c.names, c.key_type, c.not_after});
  }
  if (errors->size() != before) return nullptr;

  // Group certificates by the exact set that serves each name.
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < certs.size(); ++i) {
    for (const std::string& n : certs[i].names) {
      auto& list = by_name[n];
      if (std::find(list.begin(), list.end(), i) == list.end()) list.push_back(i);
    }
  }
  std::map<std::vector<size_t>, int> group_of_set;
  std::vector<std::vector<size_t>> sets;
  auto groupFor = [&](const std::vector<size_t>& set) {
    auto it = group_of_set.find(set);
    if (it != group_of_set.end()) return it->second;
    int g = static_cast<int>(sets.size());
    group_of_set.emplace(set, g);
    sets.push_back(set);
    return g;
  };
  groupFor(by_name[certs[0].names[0]]);  // group 0: the default certificate's
  for (const auto& [name, set] : by_name) {
    for (size_t a = 0; a < set.size(); ++a) {
      for (size_t b = a + 1; b < set.size(); ++b) {
        if (certs[set[a]].key_type == certs[set[b]].key_type) {
          errors->push_back(where(config.certificates[set[b]].mark) + "certificates " +
                            certs[set[a]].file + " and " + certs[set[b]].file + " both hold an " +
                            certs[set[a]].key_type + " key for '" + name +
                            "' (one certificate per key type and name)");
        }
      }
    }
    int g = groupFor(set);
    if (name.rfind("*.", 0) == 0) {
      self->wildcard_.emplace(name.substr(2), g);
    } else {
      self->exact_.emplace(name, g);
    }
  }
  if (errors->size() != before) return nullptr;

  for (const std::string& p : config.alpn) {
    self->alpn_wire_.push_back(static_cast<unsigned char>(p.size()));
    self->alpn_wire_.insert(self->alpn_wire_.end(), p.begin(), p.end());
  }
  if (config.session_tickets) {
    self->tickets_ = TicketKeys::forListener(listener, config.session_ticket_rotation_s);
  }
  for (const auto& set : sets) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr) {
      errors->push_back(where(config.mark) + opensslError("cannot create an SSL context"));
      return nullptr;
    }
    self->groups_.push_back(ctx);
    std::string error;
    if (!self->configure(ctx, &error)) {
      errors->push_back(where(config.mark) + error);
      return nullptr;
    }
    for (size_t i : set) {
      Certificate& c = certs[i];
      if (SSL_CTX_use_cert_and_key(ctx, c.leaf.get(), c.key.get(), c.chain.get(), 1) != 1) {
        errors->push_back(where(config.certificates[i].mark) + "certificate " + c.file + ": " +
                          opensslError("cannot use the certificate"));
        return nullptr;
      }
    }
  }
  return self;
}

bool ServerContext::configure(SSL_CTX* ctx, std::string* error) {
  const config::TlsServer& c = config_;
  SSL_CTX_set_min_proto_version(ctx, c.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  // Idle connections give their 16 KiB+ record buffers back (DESIGN.md §10); writes may move
  // (the output evbuffer is pulled up afresh on a retry) and go out a record at a time.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_ENABLE_PARTIAL_WRITE);
  SSL_CTX_set_read_ahead(ctx, 1);  // one read() per batch of records, not two per record
  if (SSL_CTX_set_cipher_list(ctx, c.ciphers.empty() ? kDefaultCiphers : c.ciphers.c_str()) != 1) {
    *error = "ciphers '" + c.ciphers + "': " + opensslError("no cipher matches");
    return false;
  }
  if (!c.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, c.ciphersuites.c_str()) != 1) {
    *error = "ciphersuites '" + c.ciphersuites + "': " + opensslError("no suite matches");
    return false;
  }
  SSL_CTX_set_tlsext_servername_callback(ctx, &ServerContext::onServerName);
  SSL_CTX_set_tlsext_servername_arg(ctx, this);
  if (!alpn_wire_.empty()) SSL_CTX_set_alpn_select_cb(ctx, &ServerContext::onAlpn, this);

  // Sessions: one id context per listener (required with client verification), a server-side
  // cache for clients without tickets, and tickets under the listener's rotating keys.
  unsigned char sid[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(listener_.data()), listener_.size(), sid);
  SSL_CTX_set_session_id_context(ctx, sid, SSL_MAX_SID_CTX_LENGTH);
  if (c.session_cache_size > 0) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, c.session_cache_size);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  SSL_CTX_set_timeout(ctx, c.session_timeout_s);
  if (tickets_ != nullptr) {
    tickets_->install(ctx);
    SSL_CTX_set_num_tickets(ctx, 1);
  } else {
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  }

  if (!c.client_ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, c.client_ca.c_str(), nullptr) != 1) {
      *error = "client_ca " + c.client_ca + ": " + opensslError("cannot load");
      return false;
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(c.client_ca.c_str());
    if (names == nullptr) {
      *error = "client_ca " + c.client_ca + ": no certificate in the file";
      return false;
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    int mode = SSL_VERIFY_PEER;
    if (c.verify == config::TlsServer::Verify::kRequired) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, nullptr);
  }
  return true;
}

SSL* ServerContext::newSsl() const {
  SSL* ssl = SSL_new(groups_[0]);
  if (ssl != nullptr) SSL_set_accept_state(ssl);
  return ssl;
}

int ServerContext::groupFor(std::string_view host) const {
  std::string name = lower(host);
  if (!name.empty() && name.back() == '.') name.pop_back();  // absolute form "a.example."
  auto it = exact_.find(name);
  if (it != exact_.end()) return it->second;
  size_t dot = name.find('.');
  if (dot == std::string::npos || dot == 0) return -1;
  auto wit = wildcard_.find(name.substr(dot + 1));
  return wit != wildcard_.end() ? wit->second : -1;
}

int ServerContext::groupOf(const SSL* ssl) {
  return static_cast<int>(reinterpret_cast<intptr_t>(SSL_get_ex_data(ssl, groupIndex())));
}

// SNI (RFC 6066 §3), during the ClientHello, on the worker doing the handshake.
int ServerContext::onServerName(SSL* ssl, int* alert, void* arg) {
  auto* self = static_cast<const ServerContext*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  int group = name != nullptr ? self->groupFor(name) : -1;
  if (group < 0) {
    if (self->config_.strict_sni) {
      *alert = SSL_AD_UNRECOGNIZED_NAME;
      return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    return SSL_TLSEXT_ERR_OK;  // the default certificate
  }
  SSL_set_ex_data(ssl, groupIndex(), reinterpret_cast<void*>(static_cast<intptr_t>(group)));
  if (group != 0) SSL_set_SSL_CTX(ssl, self->groups_[group]);
  return SSL_TLSEXT_ERR_OK;
}

// ALPN (RFC 7301 §3.2): the first of the client's protocols we speak; a client that offers
// only others gets the fatal no_application_protocol alert, as the RFC asks.
int ServerContext::onAlpn(SSL*, const unsigned char** out, unsigned char* outlen,
                          const unsigned char* in, unsigned int inlen, void* arg) {
  auto* self = static_cast<const ServerContext*>(arg);
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, self->alpn_wire_.data(),
                            static_cast<unsigned int>(self->alpn_wire_.size()), in,
                            inlen) != OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace sluice::tls
