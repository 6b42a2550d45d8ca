#include "discovery/zookeeper/register.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <utility>

namespace sluice::zookeeper {

std::string resolveAutoAddress(const std::string& address) {
  if (address.rfind("auto:", 0) != 0) return address;
  std::string ip = "127.0.0.1";
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
      auto* in = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
      if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
      char buf[INET_ADDRSTRLEN];
      if (::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf) != nullptr) {
        ip = buf;
        break;
      }
    }
    ::freeifaddrs(list);
  }
  return ip + ":" + address.substr(5);
}

Registrar::Registrar(const RegisterConfig& config, Session& session, sdk::Host host,
                     std::string label)
    : config_(config), session_(session), host_(host), label_(std::move(label)) {
  for (const std::string& a : config_.addresses) {
    paths_.push_back(config_.path + "/" + resolveAutoAddress(a));
  }
}

void Registrar::onConnected() {
  // Parents first: ZooKeeper answers one session's requests in order, so the node's create
  // runs after them. An existing parent answers ZNODEEXISTS, which is fine.
  for (size_t at = config_.path.find('/', 1); at != std::string::npos;
       at = config_.path.find('/', at + 1)) {
    session_.create(config_.path.substr(0, at), "", false, [](int) {});
  }
  session_.create(config_.path, "", false, [](int) {});
  for (const std::string& path : paths_) ensure(path, 0);
}

void Registrar::onWatch(const std::string& path) {
  for (const std::string& p : paths_) {
    if (p == path && session_.connected()) ensure(path, 0);
  }
}

void Registrar::ensure(const std::string& path, int attempt) {
  session_.create(path, config_.data, true, [this, path, attempt](int rc) {
    if (rc == ZOK) {
      host_.log(sdk::LogLevel::kInfo, label_ + ": registered " + path + " (ephemeral)");
      session_.exists(path, true, [](int) {});
      return;
    }
    if (rc != ZNODEEXISTS) {
      if (rc != ZCONNECTIONLOSS && rc != ZSESSIONEXPIRED && rc != ZCLOSING) {
        host_.log(sdk::LogLevel::kError, label_ + ": cannot register " + path + ": " + zerror(rc));
      }
      return;  // the next connection tries again
    }
    session_.getData(path, true, [this, path, attempt](int rc2, std::string, int64_t owner) {
      if (rc2 == ZNONODE && attempt < 3) {
        ensure(path, attempt + 1);  // gone meanwhile
      } else if (rc2 == ZOK && owner != session_.sessionId() && attempt < 3) {
        host_.log(sdk::LogLevel::kWarn, label_ + ": " + path + " is held by another session (" +
                                            sessionIdText(owner) +
                                            ", an earlier run of this gateway?); replacing it");
        session_.remove(path, [this, path, attempt](int) { ensure(path, attempt + 1); });
      }
    });
  });
}

}  // namespace sluice::zookeeper
