#include "core/server/listen.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/upstream/host.h"

namespace sluice::server {
namespace {

struct Resolved {
  sockaddr_storage ss{};
  socklen_t len = 0;
};

bool resolve(const std::string& address, Resolved* out, std::string* error) {
  return upstream::resolveAddress(address, &out->ss, &out->len, error);
}

uint16_t portOf(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(ss).sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
  return 0;
}

bool isWildcard(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(ss).sin_addr.s_addr == htonl(INADDR_ANY);
  }
  if (ss.ss_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr;
    return memcmp(&a, &in6addr_any, sizeof(a)) == 0;
  }
  return false;
}

bool sameIp(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    return memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                  &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

bool sameAddress(const Resolved& a, const Resolved& b) {
  return portOf(a.ss) == portOf(b.ss) && sameIp(a.ss, b.ss);
}

// Two addresses one of which the kernel would refuse next to the other (same port, same IP or
// either a wildcard).
bool overlaps(const Resolved& a, const Resolved& b) {
  return portOf(a.ss) == portOf(b.ss) &&
         (sameIp(a.ss, b.ss) || isWildcard(a.ss) || isWildcard(b.ss));
}

// "cannot bind ADDR: reason" for the errno of a failed bind(). `own` names an address of this
// process that overlaps ADDR, if any, to tell an operator whose socket is in the way.
std::string bindError(const std::string& address, int err, const std::string& own) {
  std::string reason;
  switch (err) {
    case EADDRINUSE:
      reason = own.empty()
                   ? "address already in use (held by another process)"
                   : "address already in use (overlaps " + own + ", which this process listens on)";
      break;
    case EACCES:
      reason = "permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE)";
      break;
    case EADDRNOTAVAIL:
      reason = "address not available (not an address of this host)";
      break;
    default:
      reason = strerror(err);
      if (!reason.empty()) reason[0] = static_cast<char>(tolower(reason[0]));
  }
  return "cannot bind " + address + ": " + reason;
}

// The first of `held` that overlaps `target`, or "".
std::string overlappingHeld(const Resolved& target, const std::vector<std::string>& held) {
  for (const std::string& h : held) {
    Resolved r;
    std::string ignored;
    if (resolve(h, &r, &ignored) && overlaps(target, r)) return h;
  }
  return "";
}

bool isHeld(const Resolved& target, const std::vector<std::string>& held) {
  for (const std::string& h : held) {
    Resolved r;
    std::string ignored;
    if (resolve(h, &r, &ignored) && sameAddress(target, r)) return true;
  }
  return false;
}

// A socket bound to `r`, with SO_REUSEPORT set before the bind when `reuse_port`. Returns the
// fd, or -1 with errno from the failing call.
int boundSocket(const Resolved& r, bool reuse_port) {
  int fd = socket(r.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  // SO_REUSEADDR only lets the bind pass sockets of earlier connections in TIME_WAIT; it never
  // allows a second listener on the address.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&r.ss), r.len) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

bool listenOn(const std::string& address, int backlog, size_t count, const OwnAddresses& own,
              std::vector<int>* fds, std::string* error) {
  Resolved r;
  if (!resolve(address, &r, error)) return false;
  const bool join_own = isHeld(r, own.joinable);
  std::vector<int> opened;
  auto fail = [&](std::string why) {
    for (int fd : opened) close(fd);
    *error = std::move(why);
    return false;
  };
  for (size_t i = 0; i < count; ++i) {
    // The first socket of a new address binds without SO_REUSEPORT: the race-free check that
    // nobody else holds it (see listen.h).
    const bool exclusive = i == 0 && !join_own;
    int fd = boundSocket(r, !exclusive);
    if (fd < 0) {
      int err = errno;
      return fail(bindError(address, err, err == EADDRINUSE ? overlappingHeld(r, own.all) : ""));
    }
    opened.push_back(fd);
    int one = 1;
    if (exclusive && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
      return fail("cannot set SO_REUSEPORT on " + address + ": " + strerror(errno));
    }
    if (listen(fd, backlog) != 0) {
      return fail("cannot listen on " + address + ": " + strerror(errno));
    }
  }
  fds->insert(fds->end(), opened.begin(), opened.end());
  return true;
}

int defaultBacklog() {
  constexpr int kFallback = 4096;
  FILE* f = fopen("/proc/sys/net/core/somaxconn", "re");
  if (f == nullptr) return kFallback;
  int value = 0;
  const bool ok = fscanf(f, "%d", &value) == 1 && value > 0;
  fclose(f);
  return ok ? value : kFallback;
}

bool checkBindable(const std::string& address, const OwnAddresses& own, std::string* error) {
  Resolved r;
  if (!resolve(address, &r, error)) return false;
  if (isHeld(r, own.joinable)) return true;
  int fd = boundSocket(r, false);
  if (fd < 0) {
    int err = errno;
    *error = bindError(address, err, err == EADDRINUSE ? overlappingHeld(r, own.all) : "");
    return false;
  }
  close(fd);
  return true;
}

}  // namespace sluice::server
