// The request path's side of the access log: handing a finished request's RequestInfo to the
// listener's sinks, and logging requests the codec refused before any Stream existed.
// Worker thread only.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/http/parser.h"
#include "core/proxy/request_info.h"
#include "core/proxy/runtime.h"

namespace sluice::proxy {

// Wall-clock time now, µs since the Unix epoch.
int64_t wallClockUs();

// "HTTP/1.1" or "HTTP/1.0" for a request head's minor version.
std::string_view protocolName(uint8_t version_minor);

// Writes one line per access log of `listener` for `info`. `worker`: the calling worker's index.
// Cheap when the listener has no access log.
void writeAccessLog(const ListenerInfo& listener, uint32_t worker, const RequestInfo& info);

// Logs a request the codec refused with `status` (400, 408, 414, 431, ...) before its head was
// complete: `partial` is what the parser had read (method and path may be empty or partial),
// `bytes_out` the size of the error body sent. Flags: bad_request (or downstream_timeout for
// 408) and local_reply.
void logRefusedRequest(const ListenerInfo& listener, uint32_t worker,
                       const http::MessageHead& partial, std::string_view client_address,
                       std::string_view tls_version, std::string_view sni, uint32_t status,
                       uint64_t bytes_out);

}  // namespace sluice::proxy
