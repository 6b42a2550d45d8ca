#include "core/server/file_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/common/log.h"
#include "core/event/timeval.h"

namespace sluice::server {
namespace {

uint64_t nowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

FileWatch::FileWatch(event_base* base, std::string what, const std::vector<std::string>& files,
                     uint32_t quiet_ms, uint32_t max_wait_ms, std::function<void()> changed)
    : what_(std::move(what)),
      files_(files),
      quiet_ms_(quiet_ms),
      max_wait_ms_(max_wait_ms > quiet_ms ? max_wait_ms : quiet_ms),
      changed_(std::move(changed)) {
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    SLUICE_LOG(kError, what_, ": cannot watch files: ", strerror(errno),
               "; reload with SIGHUP or POST /reload after changing them");
    return;
  }
  std::map<std::string, int> dirs;
  for (const std::string& f : files_) {
    std::filesystem::path p = std::filesystem::absolute(f);
    std::string dir = p.parent_path().string();
    auto it = dirs.find(dir);
    if (it == dirs.end()) {
      int wd = inotify_add_watch(fd_, dir.c_str(),
                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY);
      if (wd < 0) {
        SLUICE_LOG(kWarn, what_, ": cannot watch ", dir, ": ", strerror(errno),
                   "; changes there need SIGHUP or POST /reload");
        continue;
      }
      it = dirs.emplace(dir, wd).first;
    }
    names_[it->second].insert(p.filename().string());
  }
  read_event_ = event_new(base, fd_, EV_READ | EV_PERSIST, &FileWatch::onInotify, this);
  event_add(read_event_, nullptr);
  timer_ = evtimer_new(base, &FileWatch::onTimer, this);
  for (const std::string& f : files_)
    SLUICE_LOG(kInfo, "watching ", f, " for changes (", what_, ")");
}

FileWatch::~FileWatch() {
  if (read_event_ != nullptr) event_free(read_event_);
  if (timer_ != nullptr) event_free(timer_);
  if (fd_ >= 0) close(fd_);
}

void FileWatch::onInotify(evutil_socket_t fd, short, void* arg) {
  auto* self = static_cast<FileWatch*>(arg);
  alignas(inotify_event) char buf[8192];
  bool relevant = false;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      auto it = self->names_.find(ev->wd);
      // One of our files, or a Kubernetes Secret/ConfigMap swap ("..data", "..<timestamp>").
      if (ev->len > 0 && it != self->names_.end() &&
          (it->second.count(ev->name) != 0 || strncmp(ev->name, "..", 2) == 0)) {
        relevant = true;
      }
      p += sizeof(inotify_event) + ev->len;
    }
  }
  if (!relevant) return;
  uint64_t now = nowMs();
  if (self->first_event_ms_ == 0) self->first_event_ms_ = now;
  uint64_t deadline = self->first_event_ms_ + self->max_wait_ms_;
  uint64_t at = now + self->quiet_ms_ < deadline ? now + self->quiet_ms_ : deadline;
  // Re-arming pushes the callback past the burst, but never past max_wait_ms after its first
  // event: a file rewritten more often than quiet_ms would otherwise never be applied.
  timeval tv = event::toTimeval(at > now ? at - now : 0);
  evtimer_add(self->timer_, &tv);
}

void FileWatch::onTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<FileWatch*>(arg);
  self->first_event_ms_ = 0;
  self->changed_();
}

}  // namespace sluice::server
