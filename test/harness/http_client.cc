#include "test/harness/http_client.h"

#include <fcntl.h>
#include <llhttp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace sluice::test {
namespace {

bool sameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool hasHeader(const Headers& headers, std::string_view name) {
  for (const auto& header : headers) {
    if (sameName(header.first, name)) return true;
  }
  return false;
}

// Parser state for one readResponse() call.
struct ParseState {
  Response* response;
  const ReadOptions* options;
  bool field_open = false;
  bool done = false;
};

ParseState& stateOf(llhttp_t* p) { return *static_cast<ParseState*>(p->data); }

const llhttp_settings_t* responseSettings() {
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_status = [](llhttp_t* p, const char* at, size_t len) {
      stateOf(p).response->reason.append(at, len);
      return 0;
    };
    s.on_header_field = [](llhttp_t* p, const char* at, size_t len) {
      ParseState& st = stateOf(p);
      if (!st.field_open) st.response->headers.emplace_back();
      st.field_open = true;
      st.response->headers.back().first.append(at, len);
      return 0;
    };
    s.on_header_field_complete = [](llhttp_t* p) {
      stateOf(p).field_open = false;
      return 0;
    };
    s.on_header_value = [](llhttp_t* p, const char* at, size_t len) {
      stateOf(p).response->headers.back().second.append(at, len);
      return 0;
    };
    s.on_header_value_complete = [](llhttp_t* p) {
      std::string& value = stateOf(p).response->headers.back().second;
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      return 0;
    };
    s.on_headers_complete = [](llhttp_t* p) {
      ParseState& st = stateOf(p);
      st.response->status = p->status_code;
      st.response->http_major = p->http_major;
      st.response->http_minor = p->http_minor;
      st.response->chunked = (p->flags & F_CHUNKED) != 0;
      // 1: no body follows — a response to HEAD, or a status that never has one (RFC 9112
      // §6.3: 1xx, 204, 304), whatever Content-Length says.
      const unsigned st_code = p->status_code;
      bool bodiless = st_code < 200 || st_code == 204 || st_code == 304;
      return st.options->head_request || bodiless ? 1 : 0;
    };
    s.on_body = [](llhttp_t* p, const char* at, size_t len) {
      ParseState& st = stateOf(p);
      st.response->body_length += len;
      if (st.options->on_body) {
        st.options->on_body(std::string_view(at, len));
      } else {
        st.response->body.append(at, len);
      }
      return 0;
    };
    s.on_message_complete = [](llhttp_t* p) {
      ParseState& st = stateOf(p);
      st.response->keep_alive = llhttp_should_keep_alive(p) != 0;
      st.response->complete = true;
      st.done = true;
      return static_cast<int>(HPE_PAUSED);  // stop at the end of this response
    };
    return s;
  }();
  return &settings;
}

}  // namespace

std::string Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (sameName(key, name)) return value;
  }
  return "";
}

size_t Response::headerCount(std::string_view name) const {
  size_t count = 0;
  for (const auto& header : headers) count += sameName(header.first, name) ? 1 : 0;
  return count;
}

RawConnection::RawConnection(int port, int timeout_ms) : timeout_ms_(timeout_ms) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close();
    return;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

RawConnection::~RawConnection() { close(); }

bool RawConnection::send(std::string_view bytes) {
  while (fd_ >= 0 && !bytes.empty()) {
    bool want_read = false;
    long n = ioSend(bytes.data(), bytes.size(), &want_read);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd_, static_cast<short>(want_read ? POLLIN : POLLOUT), 0};
      if (::poll(&pfd, 1, timeout_ms_) <= 0) return false;
      continue;
    }
    return false;
  }
  return fd_ >= 0;
}

bool RawConnection::fill(int timeout_ms) {
  if (fd_ < 0 || eof_) {
    eof_ = true;
    return false;
  }
  bool want_write = false;
  if (ssl_ == nullptr || SSL_has_pending(ssl_) == 0) {
    pollfd pfd{fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, timeout_ms);
    if (ready == 0) {
      error_ = "timeout";
      return false;
    }
  }
  char buf[65536];
  long n = ioRecv(buf, sizeof(buf), &want_write);
  if (n > 0) {
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  eof_ = true;
  error_ = n == 0 ? "connection closed by peer" : "connection reset by peer";
  return false;
}

Response RawConnection::readResponse(const ReadOptions& options) {
  Response response;
  ParseState state{&response, &options};
  llhttp_t parser;
  llhttp_init(&parser, HTTP_RESPONSE, responseSettings());
  parser.data = &state;
  while (true) {
    if (!buffer_.empty()) {
      llhttp_errno_t err = llhttp_execute(&parser, buffer_.data(), buffer_.size());
      if (err == HPE_PAUSED || err == HPE_PAUSED_UPGRADE) {
        buffer_.erase(0, static_cast<size_t>(llhttp_get_error_pos(&parser) - buffer_.data()));
        return response;
      }
      buffer_.clear();
      if (err != HPE_OK) {
        response.error = std::string("parse error: ") + llhttp_errno_name(err) + ": " +
                         llhttp_get_error_reason(&parser);
        return response;
      }
    }
    if (eof_) {
      // A close-delimited body ends here; anything else is a truncated response.
      if (response.status != 0) llhttp_finish(&parser);
      if (state.done) return response;
      response.complete = false;
      response.error = "connection closed before a complete response";
      return response;
    }
    if (!fill(timeout_ms_) && !eof_) {
      response.error = error_;
      return response;
    }
  }
}

std::string RawConnection::readAll() {
  while (fill(timeout_ms_)) {
  }
  std::string all;
  all.swap(buffer_);
  return all;
}

std::string RawConnection::readBytes(size_t n) {
  while (buffer_.size() < n && fill(timeout_ms_)) {
  }
  std::string out = buffer_.substr(0, n);
  buffer_.erase(0, out.size());
  return out;
}

bool RawConnection::isClosed(int timeout_ms) {
  auto start = std::chrono::steady_clock::now();
  while (!eof_) {
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    if (waited >= timeout_ms) return false;
    if (!fill(static_cast<int>(timeout_ms - waited)) && !eof_) return false;
  }
  return true;
}

void RawConnection::shutdownWrite() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

void RawConnection::close() {
  if (ssl_ != nullptr) {
    // A clean close: OpenSSL marks the session of an SSL freed without one as not resumable,
    // which would spoil it for the next connection that offers it.
    SSL_shutdown(ssl_);
    ERR_clear_error();
    SSL_free(ssl_);
  }
  if (tls_ctx_ != nullptr) SSL_CTX_free(tls_ctx_);
  ssl_ = nullptr;
  tls_ctx_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string buildRequest(const std::string& method, const std::string& path, const Headers& headers,
                         const std::string& body, int port) {
  std::string out = method + " " + path + " HTTP/1.1\r\n";
  if (port != 0 && !hasHeader(headers, "Host")) {
    out += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  }
  for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
  if (!body.empty() && !hasHeader(headers, "Content-Length") &&
      !hasHeader(headers, "Transfer-Encoding")) {
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  return out + "\r\n" + body;
}

Response httpRequest(int port, const std::string& method, const std::string& path,
                     const Headers& headers, const std::string& body, int timeout_ms) {
  Headers all = headers;
  if (!hasHeader(all, "Connection")) all.emplace_back("Connection", "close");
  RawConnection conn(port, timeout_ms);
  Response response;
  if (!conn.connected()) {
    response.error = "cannot connect to 127.0.0.1:" + std::to_string(port);
    return response;
  }
  if (!conn.send(buildRequest(method, path, all, body, port))) {
    response.error = "send failed";
    return response;
  }
  ReadOptions options;
  options.head_request = method == "HEAD";
  return conn.readResponse(options);
}

Response httpGet(int port, const std::string& path, const Headers& headers) {
  return httpRequest(port, "GET", path, headers);
}

uint32_t fnv1a(std::string_view data, uint32_t hash) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

std::string patternBytes(uint64_t offset, size_t n) {
  std::string out(n, 'a');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>('a' + (offset + i) % 26);
  return out;
}

std::string hex8(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", value);
  return buf;
}

}  // namespace sluice::test
