// Reloads when a TLS certificate, key or CA file of the running config changes on disk, without
// SIGHUP: inotify on the directories holding them (not the files: tools write a new file and
// rename it over the old one, and a Kubernetes Secret mount swaps a "..data" symlink the files
// point through). A burst of events is coalesced: the callback runs once the directory has been
// quiet for `quiet_ms`, and at most `max_wait_ms` after the first event even if writes go on.
// The owner decides whether the contents really changed. Main thread.
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace sluice::server {

class CertWatch {
 public:
  // Watches the directories of `files` (absolute paths).
  CertWatch(event_base* base, const std::vector<std::string>& files, uint32_t quiet_ms,
            uint32_t max_wait_ms, std::function<void()> changed);
  ~CertWatch();
  CertWatch(const CertWatch&) = delete;
  CertWatch& operator=(const CertWatch&) = delete;

  // The files this watch was made for (to tell whether a new config needs a new watch).
  const std::vector<std::string>& files() const { return files_; }

 private:
  static void onInotify(evutil_socket_t fd, short, void* arg);
  static void onTimer(evutil_socket_t, short, void* arg);

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
