#include "core/upstream/pool.h"

namespace sluice::upstream {

ConnPool::~ConnPool() { clear(); }

std::unique_ptr<UpstreamConnection> ConnPool::acquire(const Host* host) {
  auto it = idle_.find(host);
  while (it != idle_.end() && !it->second.empty()) {
    std::unique_ptr<UpstreamConnection> conn = std::move(it->second.back());
    it->second.pop_back();
    if (it->second.empty()) {
      idle_.erase(it);
      it = idle_.end();
    }
    conn->host()->stats().cx_idle.dec();
    // An upstream that closed a kept-alive connection (its own idle timeout) may have done so
    // after our last look at the socket: check before sending on it.
    if (!conn->stillOpen()) {
      worker_.deferDelete(std::move(conn));
      continue;
    }
    conn->host()->stats().cx_reused.inc();
    return conn;
  }
  return nullptr;
}

void ConnPool::release(std::unique_ptr<UpstreamConnection> conn, uint32_t max_idle,
                       uint32_t idle_timeout_ms) {
  if (conn == nullptr) return;
  conn->detach();
  auto& list = idle_[conn->host().get()];
  if (!conn->reusable() || list.size() >= max_idle) {
    if (list.empty()) idle_.erase(conn->host().get());
    worker_.deferDelete(std::move(conn));
    return;
  }
  conn->setIdle(this, idle_timeout_ms);
  conn->host()->stats().cx_idle.inc();
  list.push_back(std::move(conn));
}

void ConnPool::remove(UpstreamConnection* conn) {
  auto it = idle_.find(conn->host().get());
  if (it == idle_.end()) return;
  auto& list = it->second;
  for (auto c = list.begin(); c != list.end(); ++c) {
    if (c->get() == conn) {
      conn->host()->stats().cx_idle.dec();
      worker_.deferDelete(std::move(*c));
      list.erase(c);
      break;
    }
  }
  if (list.empty()) idle_.erase(it);
}

void ConnPool::clear() {
  for (const auto& [host, list] : idle_)
    host->stats().cx_idle.add(-static_cast<int64_t>(list.size()));
  idle_.clear();
}

size_t ConnPool::idleCount() const {
  size_t n = 0;
  for (const auto& [host, list] : idle_) n += list.size();
  return n;
}

}  // namespace sluice::upstream
