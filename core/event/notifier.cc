#include "core/event/notifier.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace sluice::event {

Notifier::Notifier(event_base* base, std::function<void()> on_wake)
    : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      event_(event_new(base, fd_, EV_READ | EV_PERSIST, &Notifier::onReadable, this)),
      on_wake_(std::move(on_wake)) {
  event_add(event_, nullptr);
}

Notifier::~Notifier() {
  event_free(event_);
  close(fd_);
}

void Notifier::notify() {
  uint64_t one = 1;
  ssize_t ignored = write(fd_, &one, sizeof(one));  // EAGAIN only when already signalled
  (void)ignored;
}

void Notifier::onReadable(evutil_socket_t fd, short, void* arg) {
  uint64_t count = 0;
  ssize_t ignored = read(fd, &count, sizeof(count));
  (void)ignored;
  static_cast<Notifier*>(arg)->on_wake_();
}

}  // namespace sluice::event
