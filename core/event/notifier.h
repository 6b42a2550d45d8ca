// Wakes an event loop from another thread without libevent's own locking: an eventfd the loop
// watches. sluice does not call evthread_use_pthreads(), so no event_base takes a lock on the
// request path; cross-thread work goes through a Notifier and a mutex-protected queue.
#pragma once

#include <event2/event.h>

#include <functional>

namespace sluice::event {

class Notifier {
 public:
  // `on_wake` runs on the loop's thread after one or more notify() calls.
  Notifier(event_base* base, std::function<void()> on_wake);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // Thread-safe; async-signal-safe (one write(2) to the eventfd).
  void notify();

 private:
  static void onReadable(evutil_socket_t fd, short, void* arg);

  int fd_;
  ::event* event_;
  std::function<void()> on_wake_;
};

}  // namespace sluice::event
