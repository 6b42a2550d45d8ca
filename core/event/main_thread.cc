#include "core/event/main_thread.h"

#include <mutex>
#include <thread>
#include <vector>

namespace sluice::event {
namespace {

struct MainQueue {
  std::mutex mutex;
  std::vector<std::function<void()>> pending;
  ::event* wake = nullptr;
  std::thread::id thread;
  bool installed = false;
};

MainQueue& queue() {
  static MainQueue q;
  return q;
}

void onWake(evutil_socket_t, short, void*) {
  MainQueue& q = queue();
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    batch.swap(q.pending);
  }
  for (auto& fn : batch) fn();
}

}  // namespace

void installMainThread(event_base* base) {
  MainQueue& q = queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  q.thread = std::this_thread::get_id();
  q.wake = event_new(base, -1, 0, &onWake, nullptr);
  q.installed = true;
}

void uninstallMainThread() {
  MainQueue& q = queue();
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    if (!q.installed) return;
    q.installed = false;
    batch.swap(q.pending);
    event_free(q.wake);
    q.wake = nullptr;
  }
  for (auto& fn : batch) fn();
}

bool isMainThread() {
  MainQueue& q = queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  return !q.installed || q.thread == std::this_thread::get_id();
}

void postToMain(std::function<void()> fn) {
  MainQueue& q = queue();
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    if (q.installed && q.thread != std::this_thread::get_id()) {
      q.pending.push_back(std::move(fn));
      event_active(q.wake, 0, 0);
      return;
    }
  }
  fn();
}

}  // namespace sluice::event
