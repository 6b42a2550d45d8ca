#include "core/upstream/cluster_state.h"

#include <map>
#include <mutex>

namespace sluice::upstream {

std::shared_ptr<ClusterState> ClusterState::forCluster(const std::string& name) {
  static std::mutex mu;
  static auto* states = new std::map<std::string, std::weak_ptr<ClusterState>>();
  std::lock_guard<std::mutex> lock(mu);
  std::weak_ptr<ClusterState>& slot = (*states)[name];
  std::shared_ptr<ClusterState> state = slot.lock();
  if (state == nullptr) {
    state = std::make_shared<ClusterState>();
    slot = state;
  }
  return state;
}

}  // namespace sluice::upstream
