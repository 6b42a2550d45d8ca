// Writes HTTP/1.1 message heads and chunked framing into libevent buffers. Content-Length and
// Transfer-Encoding fields in the header map are ignored: framing is always emitted from the
// `framing` argument, so a message can never carry two framings (RFC 9112 §6.3).
#pragma once

#include <event2/buffer.h>

#include <cstdint>
#include <string_view>

#include "core/http/headers.h"
#include "core/http/parser.h"

namespace sluice::http {

// "METHOD target HTTP/1.1" + fields + framing + CRLF. Upstream requests are always HTTP/1.1
// with persistent connections (no Connection field).
void writeRequestHead(evbuffer* out, std::string_view method, std::string_view target,
                      const HeaderMap& headers, Framing framing, uint64_t content_length);

// "HTTP/1.1 status reason" + fields + framing + optional "Connection: close"/"keep-alive" +
// CRLF. `http10_keep_alive` adds "Connection: keep-alive" for an HTTP/1.0 client that asked
// for it. kUntilClose writes no framing field (the body ends when the connection closes).
void writeResponseHead(evbuffer* out, uint32_t status, std::string_view reason,
                       const HeaderMap& headers, Framing framing, uint64_t content_length,
                       bool close, bool http10_keep_alive);

// One chunk "<hex len>\r\n<data>\r\n" (len > 0), and the last chunk "0\r\n\r\n".
void writeChunk(evbuffer* out, const char* data, size_t len);
void writeLastChunk(evbuffer* out);

// The standard reason phrase for a status ("Not Found"), or "Unknown".
std::string_view reasonPhrase(uint32_t status);

}  // namespace sluice::http
