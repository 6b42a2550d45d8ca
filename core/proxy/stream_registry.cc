#include "core/proxy/stream_registry.h"

#include <mutex>
#include <vector>

#include "core/proxy/stream.h"

namespace sluice::proxy {
namespace {

constexpr int kIdBits = 48;
constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;

std::mutex& tableMutex() {
  static std::mutex m;
  return m;
}
// Indexed by worker index; nullptr where no worker (any more).
std::vector<StreamRegistry*>& table() {
  static std::vector<StreamRegistry*> t;
  return t;
}

uint32_t workerOf(sluice_stream_ref ref) { return static_cast<uint32_t>(ref >> kIdBits); }

}  // namespace

StreamRegistry::StreamRegistry(event::Worker& worker) : worker_(worker) {
  std::lock_guard<std::mutex> lock(tableMutex());
  auto& t = table();
  if (t.size() <= worker.index()) t.resize(worker.index() + 1, nullptr);
  t[worker.index()] = this;
}

StreamRegistry::~StreamRegistry() {
  std::lock_guard<std::mutex> lock(tableMutex());
  auto& t = table();
  if (worker_.index() < t.size() && t[worker_.index()] == this) t[worker_.index()] = nullptr;
}

sluice_stream_ref StreamRegistry::add(Stream* stream) {
  const uint64_t id = ++next_id_ & kIdMask;
  live_[id] = stream;
  return (static_cast<uint64_t>(worker_.index()) + 1) << kIdBits | id;
}

void StreamRegistry::remove(sluice_stream_ref ref) { live_.erase(ref & kIdMask); }

Stream* StreamRegistry::find(sluice_stream_ref ref) const {
  auto it = live_.find(ref & kIdMask);
  return it == live_.end() ? nullptr : it->second;
}

int StreamRegistry::post(sluice_stream_ref ref, sluice_post_fn fn, void* arg) {
  if (ref == 0 || fn == nullptr) return -1;
  const uint32_t w = workerOf(ref);
  if (w == 0) return -1;
  std::lock_guard<std::mutex> lock(tableMutex());
  auto& t = table();
  if (w - 1 >= t.size() || t[w - 1] == nullptr) return -1;
  const uint32_t index = w - 1;
  t[index]->worker_.post([index, ref, fn, arg] {
    StreamRegistry* reg = nullptr;
    {
      std::lock_guard<std::mutex> inner(tableMutex());
      if (index < table().size()) reg = table()[index];
    }
    Stream* stream = reg != nullptr ? reg->find(ref) : nullptr;
    if (stream == nullptr) {
      fn(arg, nullptr);  // ended (or its worker is shutting down): the plugin frees `arg`
      return;
    }
    stream->runPosted(fn, arg);
  });
  return 0;
}

}  // namespace sluice::proxy
