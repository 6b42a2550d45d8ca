#include "core/server/dashboard/assets.h"

namespace sluice::server::dashboard {

const Asset* findAsset(std::string_view path) {
  for (size_t i = 0; i < kAssetCount; ++i) {
    if (path == kAssets[i].path) return &kAssets[i];
  }
  return nullptr;
}

}  // namespace sluice::server::dashboard
