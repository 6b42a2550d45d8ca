// The main thread's work queue. Plugin config instances must be destroyed on the main thread
// (core/api: config_destroy), but the last reference to a replaced snapshot is often dropped on
// a worker when its last request ends; such releases are posted here.
#pragma once

#include <event2/event.h>

#include <functional>
#include <memory>

namespace sluice::event {

// Call once on the main thread with its event_base, before workers start.
void installMainThread(event_base* base);
// Stops queueing (at shutdown): later posts run inline on the calling thread.
void uninstallMainThread();
bool isMainThread();
// Runs `fn` on the main thread: inline when called there (or when no main loop is installed),
// else soon, in posting order. Thread-safe.
void postToMain(std::function<void()> fn);

// A shared_ptr whose object is destroyed on the main thread, wherever the last reference drops.
template <typename T>
std::shared_ptr<T> mainThreadOwned(std::unique_ptr<T> object) {
  return std::shared_ptr<T>(object.release(),
                            [](T* p) { postToMain([p] { std::unique_ptr<T> owned(p); }); });
}

}  // namespace sluice::event
