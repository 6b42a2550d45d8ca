// Shared pieces of the TLS integration tests: a throw-away PKI, a sluice whose listener
// terminates TLS in front of an echo backend, and one-call HTTPS requests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "test/harness/certs.h"
#include "test/integration/gateway.h"

namespace sluice::test {

// One request over a fresh TLS connection to 127.0.0.1:port: the handshake's outcome and, when
// it succeeded, the response.
struct HttpsExchange {
  TlsResult tls;
  Response response;
};

inline HttpsExchange httpsRequest(int port, const TlsOptions& options, const std::string& path,
                                  Headers headers = {}) {
  HttpsExchange out;
  RawConnection conn(port, 5000);
  out.tls = conn.startTls(options);
  if (!out.tls.ok) return out;
  bool has_host = false;
  for (const auto& h : headers) has_host = has_host || h.first == "Host";
  if (!has_host) headers.emplace_back("Host", options.sni.empty() ? "127.0.0.1" : options.sni);
  headers.emplace_back("Connection", "close");
  if (!conn.send(buildRequest("GET", path, headers))) {
    out.response.error = "send failed";
    return out;
  }
  out.response = conn.readResponse();
  return out;
}

// The admin /stats counter `key` once it reaches `want` (or its value after `timeout_ms`): a
// refused handshake reaches the client as the server's alert a moment before the server counts
// it.
inline uint64_t statReaching(int admin_port, const std::string& key, uint64_t want,
                             int timeout_ms = 3000) {
  uint64_t got = 0;
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    got = adminStats(admin_port)[key];
    if (got >= want) break;
    usleep(20 * 1000);
  }
  return got;
}

// TLS options that trust `pki` and name `sni`.
inline TlsOptions trusting(const TestPki& pki, const std::string& sni) {
  TlsOptions o;
  o.ca_file = pki.caFile();
  o.sni = sni;
  return o;
}

}  // namespace sluice::test
