// WebSocket peers for the upgrade tests: a real echo server and a real client (Debian's
// python3-websockets, driven by test/integration/ws_peer.py), and a minimal RFC 6455 client
// over RawConnection for tests that hold a tunnel open while something else happens (reload,
// drain, idle timeout). Targets using it need `data = [":ws_peer.py"]`.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "test/integration/gateway.h"

namespace sluice::test {

inline constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-websockets is

// `ws_peer.py server`: echoes every message; its output has "open PATH" and "closed CODE
// REASON" per connection. With `cert`/`key` it speaks TLS. ADD_FAILURE()s if it does not come
// up within 15 s.
class WsEchoServer {
 public:
  explicit WsEchoServer(const std::string& cert = "", const std::string& key = "") {
    std::string port_file = uniqueTmpPath("ws-port");
    std::vector<std::string> argv = {kPython, runfile("test/integration/ws_peer.py"), "server",
                                     "--port-file", port_file};
    if (!cert.empty()) argv.insert(argv.end(), {"--cert", cert, "--key", key});
    process_ = std::make_unique<Process>(argv, std::map<std::string, std::string>{}, "ws-server");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline && process_->running()) {
      std::string text = readFile(port_file);
      if (!text.empty()) {
        port_ = std::atoi(text.c_str());
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "ws_peer.py server did not start:\n" << process_->outputTail();
  }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  Process& process() { return *process_; }
  // How many connections it has seen closed so far (lines "closed ...").
  int closedCount() const {
    std::string out = process_->output();
    int n = 0;
    for (size_t at = out.find("\nclosed "); at != std::string::npos;
         at = out.find("\nclosed ", at + 1)) {
      ++n;
    }
    return n;
  }
  // Waits (up to `ms`) until closedCount() reaches `n`.
  bool waitForClosed(int n, int ms = 10000) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (closedCount() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

 private:
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

// `ws_peer.py client`: runs `scenario` against `url`; the result line ("OK ..." / "FAIL ...").
struct WsClientRun {
  int exit_code = -1;
  std::string output;
};
inline WsClientRun runWsClient(const std::string& url, const std::string& scenario,
                               const std::string& ca = "", const std::string& server_name = "") {
  std::vector<std::string> argv = {
      kPython, runfile("test/integration/ws_peer.py"), "client", "--url", url, "--scenario",
      scenario};
  if (!ca.empty()) argv.insert(argv.end(), {"--ca", ca});
  if (!server_name.empty()) argv.insert(argv.end(), {"--server-name", server_name});
  Process client(argv, {}, "ws-client-" + scenario);
  WsClientRun run;
  run.exit_code = client.waitExit(60000);
  run.output = client.output();
  return run;
}

// ---- a minimal WebSocket client (RFC 6455) over a RawConnection

// The opening handshake (RFC 6455 §4.1) for `path`, with a fixed key (servers accept any).
inline std::string wsHandshake(const std::string& path, int port,
                               const std::string& connection = "Upgrade") {
  return buildRequest("GET", path,
                      {{"Upgrade", "websocket"},
                       {"Connection", connection},
                       {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                       {"Sec-WebSocket-Version", "13"}},
                      "", port);
}

// One masked client frame with FIN set (RFC 6455 §5.2): opcode 1 text, 2 binary, 8 close.
inline std::string wsFrame(uint8_t opcode, std::string_view payload) {
  std::string f;
  f.push_back(static_cast<char>(0x80 | opcode));
  const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
  if (payload.size() < 126) {
    f.push_back(static_cast<char>(0x80 | payload.size()));
  } else if (payload.size() < 65536) {
    f.push_back(static_cast<char>(0x80 | 126));
    f.push_back(static_cast<char>(payload.size() >> 8));
    f.push_back(static_cast<char>(payload.size() & 0xff));
  } else {
    f.push_back(static_cast<char>(0x80 | 127));
    for (int i = 7; i >= 0; --i) f.push_back(static_cast<char>((payload.size() >> (8 * i)) & 0xff));
  }
  f.append(reinterpret_cast<const char*>(mask), 4);
  for (size_t i = 0; i < payload.size(); ++i) {
    f.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  }
  return f;
}

// Reads the next data or close frame from the server (unmasked; pings and pongs skipped).
// False when the connection closed or timed out first.
inline bool wsReadFrame(RawConnection& conn, uint8_t* opcode, std::string* payload) {
  while (true) {
    std::string head = conn.readBytes(2);
    if (head.size() < 2) return false;
    *opcode = static_cast<uint8_t>(head[0]) & 0x0f;
    uint64_t len = static_cast<uint8_t>(head[1]) & 0x7f;
    if (len >= 126) {
      std::string ext = conn.readBytes(len == 126 ? 2 : 8);
      if (ext.size() < (len == 126 ? 2u : 8u)) return false;
      len = 0;
      for (char c : ext) len = (len << 8) | static_cast<uint8_t>(c);
    }
    *payload = conn.readBytes(static_cast<size_t>(len));
    if (payload->size() < len) return false;
    if (*opcode != 9 && *opcode != 10) return true;
  }
}

// Opens a WebSocket through sluice on `conn`: sends the handshake for `path`, expects 101.
inline ::testing::AssertionResult wsOpen(RawConnection& conn, const std::string& path, int port) {
  if (!conn.send(wsHandshake(path, port))) return ::testing::AssertionFailure() << "send failed";
  Response r = conn.readResponse();
  if (r.status != 101) {
    return ::testing::AssertionFailure() << "status " << r.status << " " << r.error << "\n"
                                         << r.body;
  }
  return ::testing::AssertionSuccess();
}

// Sends a text message and expects it back.
inline ::testing::AssertionResult wsEcho(RawConnection& conn, const std::string& text) {
  if (!conn.send(wsFrame(1, text))) return ::testing::AssertionFailure() << "send failed";
  uint8_t opcode = 0;
  std::string payload;
  if (!wsReadFrame(conn, &opcode, &payload)) {
    return ::testing::AssertionFailure() << "no frame back (closed or timed out)";
  }
  if (opcode != 1 || payload != text) {
    return ::testing::AssertionFailure()
           << "opcode " << int(opcode) << " payload '" << payload << "'";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sluice::test
