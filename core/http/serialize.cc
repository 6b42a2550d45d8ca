#include "core/http/serialize.h"

#include <cstdio>
#include <cstring>

namespace sluice::http {
namespace {

bool isFramingField(const HeaderField& f) {
  return f.id == HeaderId::kContentLength || f.id == HeaderId::kTransferEncoding;
}

// Decimal digits of v, written backwards ending at `end`; returns the first digit.
char* formatDecimal(uint64_t v, char* end) {
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  return p;
}

// Builds one head: its size is summed first (an upper bound), then the bytes are written in one
// go — into a stack buffer handed to evbuffer_add when the head fits it (the common case, and
// cheaper than libevent's reserve/commit pair), else straight into the buffer's reserved free
// space. Never an intermediate std::string.
class HeadWriter {
 public:
  explicit HeadWriter(size_t size) : size_(size) {}

  static size_t fieldsSize(const HeaderMap& headers) {
    size_t n = 0;
    for (const auto& f : headers.fields()) {
      if (!isFramingField(f)) n += f.name.size() + f.value.size() + 4;  // ": " and CRLF
    }
    return n;
  }

  // Finds room for the head; false when libevent could not allocate it.
  bool begin(evbuffer* out) {
    out_ = out;
    if (size_ <= sizeof(stack_)) {
      p_ = start_ = stack_;
      return true;
    }
    if (evbuffer_reserve_space(out, static_cast<ev_ssize_t>(size_), &vec_, 1) < 1 ||
        vec_.iov_len < size_) {
      return false;
    }
    p_ = start_ = static_cast<char*>(vec_.iov_base);
    reserved_ = true;
    return true;
  }
  void put(std::string_view s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // The digits go straight into the head: counted first, then written backwards from their end
  // (no stack copy and memcpy; a status or Content-Length has a handful of digits).
  void putDecimal(uint64_t v) {
    size_t digits = 1;
    for (uint64_t rest = v; rest >= 10; rest /= 10) ++digits;
    p_ += digits;
    formatDecimal(v, p_);
  }
  void putFields(const HeaderMap& headers) {
    for (const auto& f : headers.fields()) {
      if (isFramingField(f)) continue;
      put(f.name);
      put(": ");
      put(f.value);
      put("\r\n");
    }
  }
  void commit() {
    const auto len = static_cast<size_t>(p_ - start_);
    if (!reserved_) {
      evbuffer_add(out_, start_, len);
      return;
    }
    vec_.iov_len = len;
    evbuffer_commit_space(out_, &vec_, 1);
  }

 private:
  size_t size_;
  evbuffer* out_ = nullptr;
  evbuffer_iovec vec_{};
  bool reserved_ = false;
  char* start_ = nullptr;
  char* p_ = nullptr;
  char stack_[2048];
};

constexpr std::string_view kContentLength = "Content-Length: ";
constexpr std::string_view kChunked = "Transfer-Encoding: chunked\r\n";
constexpr size_t kMaxDecimal = 20;  // digits of a uint64_t

size_t framingSize(Framing framing) {
  if (framing == Framing::kContentLength) return kContentLength.size() + kMaxDecimal + 2;
  return framing == Framing::kChunked ? kChunked.size() : 0;
}

void putFraming(HeadWriter& w, Framing framing, uint64_t content_length) {
  if (framing == Framing::kContentLength) {
    w.put(kContentLength);
    w.putDecimal(content_length);
    w.put("\r\n");
  } else if (framing == Framing::kChunked) {
    w.put(kChunked);
  }
}

}  // namespace

void writeRequestHead(evbuffer* out, std::string_view method, std::string_view target,
                      const HeaderMap& headers, Framing framing, uint64_t content_length) {
  constexpr std::string_view kVersion = " HTTP/1.1\r\n";
  HeadWriter w(method.size() + 1 + target.size() + kVersion.size() +
               HeadWriter::fieldsSize(headers) + framingSize(framing) + 2);
  if (!w.begin(out)) return;
  w.put(method);
  w.put(" ");
  w.put(target);
  w.put(kVersion);
  w.putFields(headers);
  putFraming(w, framing, content_length);
  w.put("\r\n");
  w.commit();
}

void writeResponseHead(evbuffer* out, uint32_t status, std::string_view reason,
                       const HeaderMap& headers, Framing framing, uint64_t content_length,
                       bool close, bool http10_keep_alive) {
  constexpr std::string_view kVersion = "HTTP/1.1 ";
  constexpr std::string_view kClose = "Connection: close\r\n";
  constexpr std::string_view kKeepAlive = "Connection: keep-alive\r\n";
  if (reason.empty()) reason = reasonPhrase(status);
  std::string_view connection = close ? kClose : http10_keep_alive ? kKeepAlive : "";
  HeadWriter w(kVersion.size() + 10 + 1 + reason.size() + 2 + HeadWriter::fieldsSize(headers) +
               framingSize(framing) + connection.size() + 2);
  if (!w.begin(out)) return;
  w.put(kVersion);
  w.putDecimal(status);
  w.put(" ");
  w.put(reason);
  w.put("\r\n");
  w.putFields(headers);
  putFraming(w, framing, content_length);
  w.put(connection);
  w.put("\r\n");
  w.commit();
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

// clang-format off
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

// clang-format on

}  // namespace sluice::http
