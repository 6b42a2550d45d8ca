#include "core/proxy/connection_balancer.h"

#include <utility>

namespace sluice::proxy {

ConnectionBalancer::ConnectionBalancer(uint32_t workers, PostFn post)
    : workers_(workers == 0 ? 1 : workers),
      slots_(std::make_unique<Slot[]>(workers_)),
      post_(std::move(post)) {}

uint32_t ConnectionBalancer::pick(uint32_t self) {
  const int64_t mine = slots_[self].connections.load(std::memory_order_relaxed);
  uint32_t least = self;
  int64_t fewest = mine;
  for (uint32_t w = 0; w < workers_; ++w) {
    const int64_t n = slots_[w].connections.load(std::memory_order_relaxed);
    if (n < fewest) {
      fewest = n;
      least = w;
    }
  }
  if (mine - fewest <= kSlack) return self;
  // Reserved now; the target's update() replaces it with its real count once it holds the
  // connection. Two workers racing may both pick it: the spread grows by one, not more.
  slots_[least].connections.fetch_add(1, std::memory_order_relaxed);
  return least;
}

void ConnectionBalancer::update(uint32_t worker, size_t connections) {
  slots_[worker].connections.store(static_cast<int64_t>(connections), std::memory_order_relaxed);
}

void ConnectionBalancer::post(uint32_t worker, std::function<void(WorkerRuntime&)> fn) const {
  post_(worker, std::move(fn));
}

int64_t ConnectionBalancer::count(uint32_t worker) const {
  return slots_[worker].connections.load(std::memory_order_relaxed);
}

}  // namespace sluice::proxy
