#include "core/http/serialize.h"

#include <string>


namespace sluice::http {
namespace {

bool isFramingField(std::string_view name) {
  return equalsIgnoreCase(name, "content-length") || equalsIgnoreCase(name, "transfer-encoding");
}

void appendFields(std::string& s, const HeaderMap& headers) {
  for (const auto& f : headers.fields()) {
    if (isFramingField(f.name)) continue;
    s.append(f.name).append(": ").append(f.value).append("\r\n");
  }
}

void appendFraming(std::string& s, Framing framing, uint64_t content_length) {
  if (framing == Framing::kContentLength) {
    s.append("Content-Length: ").append(std::to_string(content_length)).append("\r\n");
  } else if (framing == Framing::kChunked) {
    s.append("Transfer-Encoding: chunked\r\n");
  }
}

// A per-thread scratch string keeps head serialisation allocation-free in steady state.
std::string& scratch() {
  thread_local std::string s;
  s.clear();
  return s;
}

}  // namespace

void writeRequestHead(evbuffer* out, std::string_view method, std::string_view target,
                      const HeaderMap& headers, Framing framing, uint64_t content_length) {
  std::string& s = scratch();
  s.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  appendFields(s, headers);
  appendFraming(s, framing, content_length);
  s.append("\r\n");
  evbuffer_add(out, s.data(), s.size());
}

void writeResponseHead(evbuffer* out, uint32_t status, std::string_view reason,
                       const HeaderMap& headers, Framing framing, uint64_t content_length,
                       bool close, bool http10_keep_alive) {
  std::string& s = scratch();
  if (reason.empty()) reason = reasonPhrase(status);
  s.append("HTTP/1.1 ").append(std::to_string(status)).append(" ").append(reason).append("\r\n");
  appendFields(s, headers);
  appendFraming(s, framing, content_length);
  if (close) {
    s.append("Connection: close\r\n");
  } else if (http10_keep_alive) {
    s.append("Connection: keep-alive\r\n");
  }
  s.append("\r\n");
  evbuffer_add(out, s.data(), s.size());
}

void writeChunk(evbuffer* out, const char* data, size_t len) {
  if (len == 0) return;  // a zero-size chunk would end the body
  char size[24];
  int n = snprintf(size, sizeof(size), "%zx\r\n", len);
  evbuffer_add(out, size, static_cast<size_t>(n));
  evbuffer_add(out, data, len);
  evbuffer_add(out, "\r\n", 2);
}

void writeLastChunk(evbuffer* out) { evbuffer_add(out, "0\r\n\r\n", 5); }

std::string_view reasonPhrase(uint32_t status) {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 103: return "Early Hints";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 407: return "Proxy Authentication Required";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Content";
    case 425: return "Too Early";
    case 426: return "Upgrade Required";
    case 428: return "Precondition Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace sluice::http
