#include "core/server/config_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/common/log.h"

namespace sluice::server {
namespace {

uint64_t nowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

}  // namespace

ConfigWatch::ConfigWatch(event_base* base, const std::string& path, uint32_t debounce_ms,
                         uint32_t max_wait_ms, std::function<void()> changed)
    : debounce_ms_(debounce_ms),
      max_wait_ms_(std::max(max_wait_ms, debounce_ms)),
      changed_(std::move(changed)) {
  std::filesystem::path p = std::filesystem::absolute(path);
  name_ = p.filename().string();
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0 || inotify_add_watch(fd_, p.parent_path().c_str(),
                                   IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY) < 0) {
    SLUICE_LOG(kError, "watch_config: cannot watch ", p.parent_path().string(), ": ",
               strerror(errno), "; reload with SIGHUP or POST /reload instead");
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    return;
  }
  read_event_ = event_new(base, fd_, EV_READ | EV_PERSIST, &ConfigWatch::onInotify, this);
  event_add(read_event_, nullptr);
  quiet_timer_ = evtimer_new(base, &ConfigWatch::onQuiet, this);
  SLUICE_LOG(kInfo, "watching ", p.string(), " for changes");
}

ConfigWatch::~ConfigWatch() {
  if (read_event_ != nullptr) event_free(read_event_);
  if (quiet_timer_ != nullptr) event_free(quiet_timer_);
  if (fd_ >= 0) close(fd_);
}

void ConfigWatch::onInotify(evutil_socket_t fd, short, void* arg) {
  auto* self = static_cast<ConfigWatch*>(arg);
  alignas(inotify_event) char buf[8192];
  bool relevant = false;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      // The file itself, or Kubernetes' ConfigMap layout, where the file is a symlink through
      // "..data", which is swapped by rename: "..data" and "..<timestamp>" names.
      if (ev->len > 0 && (self->name_ == ev->name || strncmp(ev->name, "..", 2) == 0)) {
        relevant = true;
      }
      p += sizeof(inotify_event) + ev->len;
    }
  }
  if (!relevant) return;
  // Re-arming pushes the reload past the burst, but never past max_wait_ms after its first
  // change: a file rewritten more often than debounce_ms would otherwise never be applied.
  const uint64_t now = nowMs();
  if (self->first_change_ms_ == 0) self->first_change_ms_ = now;
  const uint64_t deadline = self->first_change_ms_ + self->max_wait_ms_;
  const uint64_t delay =
      std::min<uint64_t>(self->debounce_ms_, deadline > now ? deadline - now : 0);
  timeval tv{static_cast<time_t>(delay / 1000), static_cast<suseconds_t>((delay % 1000) * 1000)};
  evtimer_add(self->quiet_timer_, &tv);
}

void ConfigWatch::onQuiet(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<ConfigWatch*>(arg);
  self->first_change_ms_ = 0;  // changes from now on start a new bounded wait
  self->changed_();
}

}  // namespace sluice::server
