#include "discovery/zookeeper/names.h"

#include <cstdint>

#include "core/api/sdk/names.h"

namespace sluice::zookeeper {
bool isClusterName(std::string_view name) { return sdk::isClusterName(name); }

bool checkHostPort(std::string_view address, std::string* error) {
  return sdk::checkHostPort(address, error);
}

std::string joinHostPort(std::string_view host, int port) {
  std::string out =
      host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
  return out + ":" + std::to_string(port);
}

}  // namespace sluice::zookeeper
