// `watch_config: true`: reload when the config file changes. inotify watches the file's
// directory (editors and deploy tools often write a new file and rename it over the old one,
// which a watch on the file itself would miss; a Kubernetes ConfigMap swaps a "..data" symlink
// the file points through); events for other names are ignored, and a burst of events (write +
// close + rename) is coalesced into one reload after a short quiet period. The wait is bounded:
// a file that keeps changing (a tool rewriting it every 100 ms) is still reloaded `max_wait_ms`
// after the first change of the burst, and again after each further bounded wait while the
// changes go on. The owner reloads only when the file's content differs from the running config.
// Main thread.
#pragma once

#include <event2/event.h>

#include <functional>
#include <string>

namespace sluice::server {

class ConfigWatch {
 public:
  // Calls `changed` on the main thread `debounce_ms` after the last change of `path`, or
  // `max_wait_ms` after the first change not yet reported, whichever comes first.
  ConfigWatch(event_base* base, const std::string& path, uint32_t debounce_ms, uint32_t max_wait_ms,
              std::function<void()> changed);
  ~ConfigWatch();
  ConfigWatch(const ConfigWatch&) = delete;
  ConfigWatch& operator=(const ConfigWatch&) = delete;

  // False when inotify could not be set up (the reason is logged).
  bool ok() const { return fd_ >= 0; }

 private:
  static void onInotify(evutil_socket_t fd, short, void* arg);
  static void onQuiet(evutil_socket_t, short, void* arg);

  std::string name_;  // the file's base name
  uint32_t debounce_ms_;
  uint32_t max_wait_ms_;
  uint64_t first_change_ms_ = 0;  // monotonic; 0 = no change pending
  std::function<void()> changed_;
  int fd_ = -1;
  ::event* read_event_ = nullptr;
  ::event* quiet_timer_ = nullptr;
};

}  // namespace sluice::server
