// A scripted upstream for tests of how sluice treats what backends send back: a TCP server on
// 127.0.0.1 (port picked by the kernel) in the test process that answers each request with
// bytes the test chooses, well-formed or not. Used only where the echo backend cannot misbehave
// on purpose (malformed responses, hop-by-hop response headers, 1xx, close-delimited bodies).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/integration/gateway.h"

namespace sluice::test {

class ScriptedUpstream {
 public:
  // What to send back for one request.
  struct Reply {
    std::string bytes;   // written as is
    bool close = false;  // close the connection after writing
    std::string later;   // written `later_ms` after `bytes` (unsolicited bytes)
    int later_ms = 0;
  };
  // `handler(request_head, index)`: index counts requests over all connections, from 0.
  using Handler = std::function<Reply(const std::string& request_head, int index)>;

  explicit ScriptedUpstream(Handler handler);
  ~ScriptedUpstream();
  ScriptedUpstream(const ScriptedUpstream&) = delete;
  ScriptedUpstream& operator=(const ScriptedUpstream&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Connections accepted so far.
  int connections() const { return connections_; }
  // Request heads received so far, in order.
  std::vector<std::string> requests() const;

 private:
  void acceptLoop();
  void serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> next_index_{0};
  mutable std::mutex mu_;
  std::vector<std::string> requests_;
  std::vector<int> fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

// "HTTP/1.1 200 OK" with Content-Length and `body`; `headers` are extra "Name: value\r\n" lines.
std::string okResponse(const std::string& body, const std::string& headers = "");

// A ScriptedUpstream as the only endpoint of cluster "up" (retries: 0, response_timeout_ms:
// 3000) behind a one-worker sluice: requests to /gateway/up/... reach it.
struct ScriptedGateway {
  // `first` answers request 0, `rest` every later one.
  explicit ScriptedGateway(ScriptedUpstream::Reply first, std::string rest = okResponse("fine"));
  explicit ScriptedGateway(ScriptedUpstream::Handler handler);

  // A GET of `path` with a Host header.
  std::string get(const std::string& path, const Headers& headers = {}) const;

  ScriptedUpstream upstream;
  Gateway gateway;
};

}  // namespace sluice::test
