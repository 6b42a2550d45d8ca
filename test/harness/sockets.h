// Sockets a test holds itself, to put sluice next to another process on the same address.
#pragma once

#include <string>

namespace sluice::test {

// A socket of this test process listening on a free loopback port with SO_REUSEADDR and
// SO_REUSEPORT set, for as long as it lives: the same effective UID as the sluice under test,
// so the kernel alone would let another SO_REUSEPORT socket (a sluice worker's) join it.
// ADD_FAILURE()s when it cannot be set up.
class ReusePortListener {
 public:
  ReusePortListener();
  ~ReusePortListener();
  ReusePortListener(const ReusePortListener&) = delete;
  ReusePortListener& operator=(const ReusePortListener&) = delete;
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace sluice::test
