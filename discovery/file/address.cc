// Name and address checks of the endpoints file (declared in endpoints_file.h).
#include <string>
#include <string_view>

#include "core/api/sdk/names.h"
#include "discovery/file/endpoints_file.h"

namespace sluice::discovery {

bool isClusterName(std::string_view name) { return sdk::isClusterName(name); }

bool checkAddress(std::string_view address, std::string* error) {
  return sdk::checkHostPort(address, error);
}

}  // namespace sluice::discovery
