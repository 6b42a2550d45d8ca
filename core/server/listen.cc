#include "core/server/listen.h"

#include <event2/util.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/upstream/host.h"

namespace sluice::server {

int listenOn(const std::string& address, int backlog, std::string* error) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (!upstream::resolveAddress(address, &ss, &len, error)) return -1;
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    *error = "cannot bind " + address + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  if (listen(fd, backlog) != 0) {
    *error = "cannot listen on " + address + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace sluice::server
