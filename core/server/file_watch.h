// Calls back when files change on disk, for `watch_config` (the config file) and for TLS
// certificates, keys and CAs. inotify watches the files' directories, not the files: editors
// and deploy tools write a new file and rename it over the old one (a watch on the file itself
// would miss it), and a Kubernetes ConfigMap or Secret volume swaps a "..data" symlink the files
// point through ("..data" and "..<timestamp>" names count as changes of every watched file).
// A burst of events (write + close + rename) is coalesced: the callback runs once the files
// have been quiet for `quiet_ms`, and at most `max_wait_ms` after the burst's first event even
// if writes go on (a file rewritten every 100 ms is still applied about once a second). The
// owner decides whether the content really changed. Main thread.
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace sluice::server {

class FileWatch {
 public:
  // Watches the directories of `files` (relative paths are made absolute). `what` names the
  // watch in log lines ("watch_config", "tls").
  FileWatch(event_base* base, std::string what, const std::vector<std::string>& files,
            uint32_t quiet_ms, uint32_t max_wait_ms, std::function<void()> changed);
  ~FileWatch();
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  // False when inotify could not be set up at all (the reason is logged).
  bool ok() const { return fd_ >= 0; }
  // The files this watch was made for (to tell whether a new config needs a new watch).
  const std::vector<std::string>& files() const { return files_; }

 private:
  static void onInotify(evutil_socket_t fd, short, void* arg);
  static void onTimer(evutil_socket_t, short, void* arg);

  std::string what_;
  std::vector<std::string> files_;
  std::map<int, std::set<std::string>> names_;  // watch descriptor → base names in that dir
  uint32_t quiet_ms_;
  uint32_t max_wait_ms_;
  std::function<void()> changed_;
  int fd_ = -1;
  ::event* read_event_ = nullptr;
  ::event* timer_ = nullptr;
  uint64_t first_event_ms_ = 0;  // 0: no change pending
};

}  // namespace sluice::server
