// echo_backend: the demo and test backend. Answers every request with its own name and what it
// received; a few special paths make it misbehave on purpose for tests (see kUsage).
#include <arpa/inet.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tools/echo_backend/connection.h"

namespace {

constexpr char kUsage[] =
    R"(usage: echo_backend --name NAME --listen HOST:PORT [--workers N]

Answers every request 200 with a JSON body: backend name, method, path (with query), HTTP
version, client address, every received header as "Name: value" (in order, duplicates kept),
body length and body_fnv1a (FNV-1a 32-bit hash of the body, 8 hex digits). Every reply carries
"X-Backend: NAME". Keep-alive and pipelining (answered in order), HTTP/1.0, chunked request
bodies and "Expect: 100-continue" are supported. Bodies are hashed as they stream in, never
kept in memory. Prints "listening on HOST:PORT" on stdout once ready (PORT 0 picks a free port;
the line shows the real one). SIGINT/SIGTERM exit at once.

Special paths (matched on the end of the path, so they also work behind a proxy prefix such as
/gateway/demo/status/503):
  .../status/NNN   answer with status NNN (200-599) and the usual JSON body (none for 204/304)
  .../delay/MS     answer after MS milliseconds (a timer; other connections are not blocked)
  .../bytes/N      answer N bytes ('a' + i % 26 for byte i), chunked in 16 KiB chunks, streamed
                   with bounded memory (N may be many GiB); add ?framing=length for a
                   Content-Length reply instead (always used for HTTP/1.0 clients)
  .../upload       any method: reads the whole body and answers its body_length and body_fnv1a
                   (same JSON as every other path; the name is for readable tests)
  .../drop         close the connection without answering (for upstream-reset tests)
A malformed request or a bad number in a special path gets 400 and the connection is closed.

options:
  --name NAME         name reported in bodies and the X-Backend header (default "echo")
  --listen HOST:PORT  address to listen on (required), e.g. 127.0.0.1:9001
  --workers N         worker threads sharing the listening socket (default 1)
  --help              this text
)";

struct Options {
  std::string name = "echo";
  std::string listen;
  int workers = 1;
};

// One thread with its own loop and listening socket; owns its connections.
struct Worker {
  std::string name;
  event_base* base = nullptr;
  evconnlistener* listener = nullptr;
  std::unordered_map<sluice::echo::Connection*, std::unique_ptr<sluice::echo::Connection>> conns;
};

[[noreturn]] void usageError(const std::string& message) {
  std::fprintf(stderr, "echo_backend: %s\n\n%s", message.c_str(), kUsage);
  std::exit(2);
}

Options parseArgs(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (size_t eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usageError("missing value for " + arg);
    }
    if (arg == "--name") {
      options.name = value;
    } else if (arg == "--listen") {
      options.listen = value;
    } else if (arg == "--workers") {
      options.workers = std::atoi(value.c_str());
      if (options.workers < 1 || options.workers > 256) usageError("bad --workers " + value);
    } else {
      usageError("unknown option " + arg);
    }
  }
  if (options.listen.empty()) usageError("--listen is required");
  return options;
}

std::string formatAddress(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
  port = ntohs(in6->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

// Parses "ipv4:port" or "[ipv6]:port" (port 0 allowed) into `addr`.
bool parseAddress(const std::string& text, sockaddr_storage* addr, socklen_t* len) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return false;
  std::string host = text.substr(0, colon);
  char* end = nullptr;
  long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535) return false;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(addr);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(*in6);
    return inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &in6->sin6_addr) == 1;
  }
  auto* in = reinterpret_cast<sockaddr_in*>(addr);
  in->sin_family = AF_INET;
  in->sin_port = htons(static_cast<uint16_t>(port));
  *len = sizeof(*in);
  if (host == "localhost") host = "127.0.0.1";
  return inet_pton(AF_INET, host.c_str(), &in->sin_addr) == 1;
}

// A bound, listening, non-blocking socket on `addr`; exits on failure.
int listenOn(const sockaddr_storage& addr, socklen_t len) {
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 ||
      listen(fd, 1024) != 0) {
    std::fprintf(stderr, "echo_backend: cannot listen on %s: %s\n",
                 formatAddress(reinterpret_cast<const sockaddr*>(&addr)).c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
  return fd;
}

void acceptCb(evconnlistener*, evutil_socket_t fd, sockaddr* peer, int, void* arg) {
  auto* worker = static_cast<Worker*>(arg);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  auto conn = std::make_unique<sluice::echo::Connection>(
      worker->base, fd, formatAddress(peer), worker->name,
      [worker](sluice::echo::Connection* dead) { worker->conns.erase(dead); });
  sluice::echo::Connection* key = conn.get();
  worker->conns.emplace(key, std::move(conn));
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parseArgs(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);

  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  if (!parseAddress(options.listen, &addr, &addr_len)) {
    usageError("bad --listen address " + options.listen);
  }
  // One listening socket shared by every worker's loop. Deliberately no SO_REUSEPORT: a second
  // backend on the same port must fail loudly, not silently share the port's traffic.
  int listen_fd = listenOn(addr, addr_len);
  getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &addr_len);

  // Signals are taken by sigwait() below; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (int i = 0; i < options.workers; ++i) {
    auto worker = std::make_unique<Worker>();
    worker->name = options.name;
    worker->base = event_base_new();
    worker->listener = evconnlistener_new(worker->base, acceptCb, worker.get(), 0, -1, listen_fd);
    if (worker->base == nullptr || worker->listener == nullptr) {
      std::fprintf(stderr, "echo_backend: libevent setup failed\n");
      return 1;
    }
    threads.emplace_back([base = worker->base] { event_base_dispatch(base); });
    workers.push_back(std::move(worker));
  }
  std::printf("listening on %s\n", formatAddress(reinterpret_cast<sockaddr*>(&addr)).c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  std::fflush(stdout);
  std::_Exit(0);
}
