#include "core/proxy/access_log.h"

#include <time.h>

namespace sluice::proxy {

int64_t wallClockUs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + static_cast<int64_t>(ts.tv_nsec) / 1000;
}

std::string_view protocolName(uint8_t version_minor) {
  return version_minor == 0 ? "HTTP/1.0" : "HTTP/1.1";
}

void writeAccessLog(const ListenerInfo& listener, uint32_t worker, const RequestInfo& info) {
  for (const auto& sink : listener.access_logs) sink->log(worker, info);
}

void logRefusedRequest(const ListenerInfo& listener, uint32_t worker,
                       const http::MessageHead& partial, std::string_view client_address,
                       std::string_view tls_version, std::string_view sni, uint32_t status,
                       uint64_t bytes_out) {
  if (listener.access_logs.empty()) return;
  RequestInfo info;
  info.start_unix_us = wallClockUs();
  info.client_address = client_address;
  info.tls_version = tls_version;
  info.sni = sni;
  info.listener = listener.config.name;
  info.method = partial.method;
  info.path = partial.target;
  if (!partial.method.empty()) info.protocol = protocolName(partial.version_minor);
  info.status = status;
  info.bytes_out = bytes_out;
  info.setFlag(status == 408 ? kDownstreamTimeout : kBadRequest);
  info.setFlag(kLocalReply);
  writeAccessLog(listener, worker, info);
}

}  // namespace sluice::proxy
