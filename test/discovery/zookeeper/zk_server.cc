#include "test/discovery/zookeeper/zk_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "test/harness/env.h"

namespace sluice::test {

std::string fourLetterWord(int port, const std::string& word, int timeout_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, word.data(), word.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(word.size())) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    char buf[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

ZkServer::ZkServer() : port_(freePort()), dir_(uniqueTmpPath("zookeeper")) {
  if (!start()) ADD_FAILURE() << "ZooKeeper did not start on port " << port_;
}

ZkServer::~ZkServer() { kill(); }

bool ZkServer::serving() const {
  return fourLetterWord(port_, "srvr", 1000).find("Mode: standalone") != std::string::npos;
}

bool ZkServer::start() {
  kill();
  process_ = std::make_unique<Process>(
      std::vector<std::string>{runfile("tools/zk/zookeeper_server"), "--port",
                               std::to_string(port_), "--dir", dir_},
      std::map<std::string, std::string>{}, "zookeeper");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) {
      ADD_FAILURE() << "ZooKeeper exited:\n" << process_->outputTail();
      return false;
    }
    if (serving()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "ZooKeeper not serving after 30 s:\n" << process_->outputTail();
  return false;
}

void ZkServer::kill() {
  if (process_ != nullptr) {
    process_->signal(SIGCONT);
    process_->kill();
  }
}

bool ZkServer::pause() { return process_ != nullptr && process_->signal(SIGSTOP); }
bool ZkServer::resume() { return process_ != nullptr && process_->signal(SIGCONT); }
bool ZkServer::running() { return process_ != nullptr && process_->running(); }

}  // namespace sluice::test
