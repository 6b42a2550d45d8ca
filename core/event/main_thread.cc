#include "core/event/main_thread.h"

#include "core/event/notifier.h"

#include <mutex>
#include <thread>
#include <vector>

namespace sluice::event {
namespace {

struct MainQueue {
  std::mutex mutex;
  std::vector<std::function<void()>> pending;
  std::unique_ptr<Notifier> wake;
  std::thread::id thread;
  bool installed = false;
};

MainQueue& queue() {
  static MainQueue q;
  return q;
}

void onWake() {
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
  q.wake = std::make_unique<Notifier>(base, &onWake);
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
    q.wake.reset();
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
      bool was_empty = q.pending.empty();
      q.pending.push_back(std::move(fn));
      if (was_empty) q.wake->notify();
      return;
    }
  }
  fn();
}

}  // namespace sluice::event
