#include "test/integration/scripted_upstream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

namespace sluice::test {
namespace {

bool writeAll(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Content-Length of a request head (0 when absent); chunked request bodies are not supported.
size_t contentLength(const std::string& head) {
  size_t at = 0;
  while ((at = head.find('\n', at)) != std::string::npos) {
    ++at;
    if (strncasecmp(head.c_str() + at, "content-length:", 15) == 0) {
      return static_cast<size_t>(std::atoll(head.c_str() + at + 15));
    }
  }
  return 0;
}

constexpr char kScriptedConfig[] = R"(
workers: 1
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    context_path: /gateway
clusters:
  - name: up
    retries: 0
    response_timeout_ms: 3000
    endpoints: [${UP}]
)";

}  // namespace

ScriptedGateway::ScriptedGateway(ScriptedUpstream::Reply first, std::string rest)
    : upstream([first, rest](const std::string&, int index) {
        return index == 0 ? first : ScriptedUpstream::Reply{rest};
      }),
      gateway(kScriptedConfig, {{"UP", upstream.address()}}) {}

ScriptedGateway::ScriptedGateway(ScriptedUpstream::Handler handler)
    : upstream(std::move(handler)), gateway(kScriptedConfig, {{"UP", upstream.address()}}) {}

std::string ScriptedGateway::get(const std::string& path, const Headers& headers) const {
  return buildRequest("GET", path, headers, "", gateway.port());
}

std::string okResponse(const std::string& body, const std::string& headers) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + headers +
         "\r\n" + body;
}

ScriptedUpstream::ScriptedUpstream(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(listen_fd_, 64) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return;
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { acceptLoop(); });
}

ScriptedUpstream::~ScriptedUpstream() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : threads_) t.join();
  for (int fd : fds_) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::vector<std::string> ScriptedUpstream::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void ScriptedUpstream::acceptLoop() {
  while (!stop_) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 50) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++connections_;
    std::lock_guard<std::mutex> lock(mu_);
    fds_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void ScriptedUpstream::serve(int fd) {
  std::string in;
  char buf[65536];
  bool open = true;
  while (open && !stop_) {
    size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) {
      pollfd pfd{fd, POLLIN, 0};
      if (::poll(&pfd, 1, 50) <= 0) continue;
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      continue;
    }
    std::string head = in.substr(0, end + 4);
    size_t need = head.size() + contentLength(head);
    while (in.size() < need && !stop_) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
    in.erase(0, std::min(need, in.size()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(head);
    }
    Reply reply = handler_(head, next_index_++);
    open = writeAll(fd, reply.bytes);
    if (open && !reply.later.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(reply.later_ms));
      open = writeAll(fd, reply.later);
    }
    if (reply.close) open = false;
  }
  ::shutdown(fd, SHUT_WR);
  // Wait briefly for the peer's close so our close does not reset unread bytes.
  pollfd pfd{fd, POLLIN, 0};
  while (!stop_ && ::poll(&pfd, 1, 50) >= 0) {
    if ((pfd.revents & POLLIN) != 0 && ::recv(fd, buf, sizeof(buf), 0) <= 0) break;
  }
}

}  // namespace sluice::test
