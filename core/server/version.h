#pragma once

namespace sluice::server {
inline constexpr const char kVersion[] = "0.1.0";
}  // namespace sluice::server
