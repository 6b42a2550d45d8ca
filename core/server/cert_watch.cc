#include "core/server/cert_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/common/log.h"

namespace sluice::server {
namespace {

uint64_t nowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

timeval toTimeval(uint64_t ms) {
  return timeval{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
}

}  // namespace

CertWatch::CertWatch(event_base* base, const std::vector<std::string>& files, uint32_t quiet_ms,
                     uint32_t max_wait_ms, std::function<void()> changed)
    : files_(files), quiet_ms_(quiet_ms), max_wait_ms_(max_wait_ms), changed_(std::move(changed)) {
  fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) {
    SLUICE_LOG(kError, "tls: cannot watch certificate files: ", strerror(errno),
               "; reload with SIGHUP or POST /reload after replacing them");
    return;
  }
  std::map<std::string, int> dirs;
  for (const std::string& f : files_) {
    std::filesystem::path p(f);
    std::string dir = p.parent_path().string();
    auto it = dirs.find(dir);
    if (it == dirs.end()) {
      int wd = inotify_add_watch(fd_, dir.c_str(),
                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY);
      if (wd < 0) {
        SLUICE_LOG(kWarn, "tls: cannot watch ", dir, ": ", strerror(errno),
                   "; changes there need SIGHUP or POST /reload");
        continue;
      }
      it = dirs.emplace(dir, wd).first;
    }
    names_[it->second].insert(p.filename().string());
  }
  read_event_ = event_new(base, fd_, EV_READ | EV_PERSIST, &CertWatch::onInotify, this);
  event_add(read_event_, nullptr);
  timer_ = evtimer_new(base, &CertWatch::onTimer, this);
}

CertWatch::~CertWatch() {
  if (read_event_ != nullptr) event_free(read_event_);
  if (timer_ != nullptr) event_free(timer_);
  if (fd_ >= 0) close(fd_);
}

void CertWatch::onInotify(evutil_socket_t fd, short, void* arg) {
  auto* self = static_cast<CertWatch*>(arg);
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
  timeval tv = toTimeval(at > now ? at - now : 0);
  evtimer_add(self->timer_, &tv);  // re-arming pushes the reload past the burst, up to the cap
}

void CertWatch::onTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<CertWatch*>(arg);
  self->first_event_ms_ = 0;
  self->changed_();
}

}  // namespace sluice::server
