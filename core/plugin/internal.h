// Helpers shared by the plugin host's files. Not part of the plugin host interface.
#pragma once

#include <string>

#include "core/api/common.h"
#include "core/config/config.h"

namespace sluice::plugin::internal {

// "file:line:col" ("file" alone when the line is unknown; "<config>" when the file is).
std::string where(const config::Mark& mark);

// "filter", "balancer", "discovery", or "unknown kind N".
std::string kindName(sluice_plugin_kind kind);

}  // namespace sluice::plugin::internal
