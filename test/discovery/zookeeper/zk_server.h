// A real ZooKeeper server for tests: Debian's ZooKeeper 3.8 (package `zookeeper`), started by
// tools/zk/zookeeper_server on a free loopback port with its data under the test's temp dir.
// Java takes about a second to start, so share one server per test suite (distinct roots per
// test) and keep restarts for the fault tests. tickTime is 200 ms, so sessions may be as short
// as 400 ms. The test target needs data = ["//tools/zk:zookeeper_server"].
// Not thread-safe: use it from the test's main thread.
#pragma once

#include <memory>
#include <string>

#include "test/harness/process.h"

namespace sluice::test {

class ZkServer {
 public:
  // Starts the server and waits until it serves; ADD_FAILURE()s if it does not within 30 s.
  ZkServer();
  ~ZkServer();
  ZkServer(const ZkServer&) = delete;
  ZkServer& operator=(const ZkServer&) = delete;

  int port() const { return port_; }
  // The connect string, "127.0.0.1:PORT".
  std::string servers() const { return "127.0.0.1:" + std::to_string(port_); }

  // (Re)starts it on the same port and data directory (data and unexpired sessions survive,
  // as in a real restart); waits until it serves. False if it does not within 30 s.
  bool start();
  // SIGKILL, and waits until it is gone: a crash, nothing flushed or said to clients.
  void kill();
  // SIGSTOP / SIGCONT: a hung server (connections open, nothing answered).
  bool pause();
  bool resume();
  bool running();
  // True when the server answers `srvr` as a serving standalone server.
  bool serving() const;
  Process* process() { return process_.get(); }

 private:
  int port_;
  std::string dir_;
  std::unique_ptr<Process> process_;
};

// Sends a four-letter command ("ruok", "srvr") to 127.0.0.1:port; "" when nothing answers.
std::string fourLetterWord(int port, const std::string& word, int timeout_ms = 1000);

}  // namespace sluice::test
