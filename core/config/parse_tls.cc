// `tls:` on listeners (downstream, server side) and on clusters (upstream, client side). The
// files named here are read and checked when the config is built (core/tls/), where a missing
// file, bad PEM or a key that does not match its certificate is reported with this mark.
#include "core/config/parse.h"

namespace sluice::config::internal {
namespace {

bool readPath(const Field& f, Context& ctx, std::string* out) {
  std::string path;
  if (!readString(f, ctx, &path)) return false;
  if (path.empty()) {
    ctx.error(f.mark, cat(f.label, ": empty path"));
    return false;
  }
  *out = resolvePath(ctx, path);
  return true;
}

void readVersion(const Field& f, Context& ctx, std::string* out) {
  std::string v;
  if (!readString(f, ctx, &v)) return;
  if (v != "1.2" && v != "1.3") {
    ctx.error(f.mark, cat(f.label,
                          ": expected \"1.2\" or \"1.3\" (older TLS versions are not "
                          "supported), got '",
                          v, "'"));
    return;
  }
  *out = v;
}

void readCipherString(const Field& f, Context& ctx, std::string* out) {
  if (!readString(f, ctx, out)) return;
  if (out->empty()) ctx.error(f.mark, cat(f.label, ": empty (leave it out for the default)"));
}

// ALPN protocol names: each 1..255 bytes (RFC 7301 §3.1). Only http/1.1 is spoken today.
void readAlpn(const Field& f, Context& ctx, std::vector<std::string>* out) {
  out->clear();
  forEachItem(f, ctx, [&](const Field& item) {
    std::string name;
    if (!readString(item, ctx, &name)) return;
    if (name != "http/1.1") {
      ctx.error(item.mark,
                cat(item.label, ": unsupported protocol '", name, "' (sluice speaks http/1.1)"));
      return;
    }
    out->push_back(name);
  });
}

void parseCertificate(const Field& field, Context& ctx, TlsCertificate* out) {
  out->mark = field.mark;
  forEachField(field, "certificate", {"cert_chain", "private_key"}, ctx, [&](const Field& f) {
    readPath(f, ctx, f.key == "cert_chain" ? &out->cert_chain : &out->private_key);
  });
  requireFields(field, {"cert_chain", "private_key"}, ctx);
}

void parseClientCertHeaders(const Field& field, Context& ctx, ClientCertHeaders* out) {
  forEachField(field, "client_cert_headers", {"subject", "uri_san", "dns_san", "fingerprint"}, ctx,
               [&](const Field& f) {
                 std::string* target = f.key == "subject"   ? &out->subject
                                       : f.key == "uri_san" ? &out->uri_san
                                       : f.key == "dns_san" ? &out->dns_san
                                                            : &out->fingerprint;
                 readHeaderName(f, ctx, target);  // "" sends none
               });
}

}  // namespace

void parseListenerTls(const Field& field, Context& ctx, TlsServer* out) {
  out->enabled = true;
  out->mark = field.mark;
  bool verify_given = false;
  forEachField(
      field, "tls",
      {"certificates", "strict_sni", "min_version", "ciphers", "ciphersuites", "alpn", "client_ca",
       "verify", "client_cert_headers", "handshake_timeout_ms", "session_tickets",
       "session_ticket_rotation_s", "session_cache_size", "session_timeout_s", "refuse_expired"},
      ctx, [&](const Field& f) {
        const std::string& k = f.key;
        if (k == "certificates") {
          forEachItem(f, ctx, [&](const Field& item) {
            parseCertificate(item, ctx, &out->certificates.emplace_back());
          });
          if (out->certificates.empty()) {
            ctx.error(f.mark, cat(f.label, ": at least one certificate is needed"));
          }
        } else if (k == "strict_sni") {
          readBool(f, ctx, &out->strict_sni);
        } else if (k == "min_version") {
          readVersion(f, ctx, &out->min_version);
        } else if (k == "ciphers") {
          readCipherString(f, ctx, &out->ciphers);
        } else if (k == "ciphersuites") {
          readCipherString(f, ctx, &out->ciphersuites);
        } else if (k == "alpn") {
          readAlpn(f, ctx, &out->alpn);
        } else if (k == "client_ca") {
          readPath(f, ctx, &out->client_ca);
        } else if (k == "verify") {
          verify_given = true;
          std::string v;
          if (!readString(f, ctx, &v)) return;
          if (v == "required") {
            out->verify = TlsServer::Verify::kRequired;
          } else if (v == "optional") {
            out->verify = TlsServer::Verify::kOptional;
          } else if (v == "none") {
            out->verify = TlsServer::Verify::kNone;
          } else {
            ctx.error(f.mark, cat(f.label, ": expected required, optional or none, got '", v, "'"));
          }
        } else if (k == "client_cert_headers") {
          parseClientCertHeaders(f, ctx, &out->client_cert_headers);
        } else if (k == "handshake_timeout_ms") {
          readTimeoutMs(f, ctx, &out->handshake_timeout_ms);
        } else if (k == "session_tickets") {
          readBool(f, ctx, &out->session_tickets);
        } else if (k == "session_ticket_rotation_s") {
          readUint32(f, 1, 7 * 24 * 3600, ctx, &out->session_ticket_rotation_s);
        } else if (k == "session_cache_size") {
          readUint32(f, 0, 10000000, ctx, &out->session_cache_size);
        } else if (k == "session_timeout_s") {
          readUint32(f, 1, 7 * 24 * 3600, ctx, &out->session_timeout_s);
        } else {
          readBool(f, ctx, &out->refuse_expired);
        }
      });
  requireFields(field, {"certificates"}, ctx);
  if (!out->client_ca.empty() && !verify_given) out->verify = TlsServer::Verify::kRequired;
  if (out->client_ca.empty() && out->verify != TlsServer::Verify::kNone) {
    ctx.error(field.mark, cat(field.label, ".verify: client certificates need client_ca"));
  }
}

void parseClusterTls(const Field& field, Context& ctx, TlsClient* out) {
  out->enabled = true;
  out->mark = field.mark;
  if (field.value.IsScalar()) {  // `tls: true` / `tls: false`
    readBool(field, ctx, &out->enabled);
    return;
  }
  forEachField(field, "tls",
               {"ca_file", "verify", "sni", "cert_chain", "private_key", "alpn", "min_version"},
               ctx, [&](const Field& f) {
                 const std::string& k = f.key;
                 if (k == "ca_file") {
                   readPath(f, ctx, &out->ca_file);
                 } else if (k == "verify") {
                   readBool(f, ctx, &out->verify);
                 } else if (k == "sni") {
                   readString(f, ctx, &out->sni);
                 } else if (k == "cert_chain") {
                   out->client_certificate.mark = f.mark;
                   readPath(f, ctx, &out->client_certificate.cert_chain);
                 } else if (k == "private_key") {
                   readPath(f, ctx, &out->client_certificate.private_key);
                 } else if (k == "alpn") {
                   readAlpn(f, ctx, &out->alpn);
                 } else {
                   readVersion(f, ctx, &out->min_version);
                 }
               });
  if (out->client_certificate.cert_chain.empty() != out->client_certificate.private_key.empty()) {
    ctx.error(field.mark, cat(field.label, ": cert_chain and private_key go together"));
  }
}

}  // namespace sluice::config::internal
