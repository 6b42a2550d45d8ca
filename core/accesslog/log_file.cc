#include "core/accesslog/log_file.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/accesslog/registry.h"
#include "core/common/log.h"

namespace sluice::accesslog {
namespace {

constexpr char kStderr[] = "stderr";
constexpr uint64_t kErrorLogIntervalUs = 10 * 1000000ull;

uint64_t monoUs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

int openForAppend(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) *error = std::strerror(errno);
  return fd;
}

}  // namespace

std::unique_ptr<LogFile> LogFile::open(const std::string& path, Registry* owner,
                                       std::string* error) {
  int fd = STDERR_FILENO;
  if (path != kStderr) {
    fd = openForAppend(path, error);
    if (fd < 0) return nullptr;
  }
  return std::make_unique<LogFile>(Key(), path, fd, owner);
}

LogFile::LogFile(Key, std::string path, int fd, Registry* owner)
    : path_(std::move(path)),
      fd_(fd),
      owner_(owner),
      slots_(std::make_unique<Slot[]>(kMaxWorkers)) {}

LogFile::~LogFile() {
  if (fd_ != STDERR_FILENO && fd_ >= 0) ::close(fd_);
}

bool LogFile::append(uint32_t worker, std::string_view line, size_t limit) {
  if (worker >= kMaxWorkers) worker = kMaxWorkers - 1;
  Slot& slot = slots_[worker];
  if (slots_used_.load(std::memory_order_relaxed) <= worker) {
    // Rare (first line of a worker): raise the high-water mark the writer scans up to.
    uint32_t seen = slots_used_.load(std::memory_order_relaxed);
    while (seen <= worker &&
           !slots_used_.compare_exchange_weak(seen, worker + 1, std::memory_order_relaxed)) {
    }
  }
  size_t size;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    size = slot.pending.size();
    if (size + line.size() > limit) {
      slot.dropped.store(slot.dropped.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
      size = SIZE_MAX;
    } else {
      slot.pending.append(line);
      size += line.size();
    }
  }
  // Past half full (or full): have the writer come now instead of at its next interval.
  if (owner_ != nullptr && size > limit / 2) owner_->wake();
  return size != SIZE_MAX;
}

bool LogFile::writeAll(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

uint64_t LogFile::flush() {
  uint64_t lost = 0;
  uint32_t used = slots_used_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < used; ++i) {
    Slot& slot = slots_[i];
    spare_.clear();
    {
      std::lock_guard<std::mutex> lock(slot.mu);
      if (slot.pending.empty()) continue;
      slot.pending.swap(spare_);  // the worker gets the empty buffer (its capacity kept)
    }
    if (!writeAll(spare_)) {
      int err = errno;
      lost += spare_.size();
      uint64_t now = monoUs();
      if (last_error_log_us_ == 0 || now - last_error_log_us_ >= kErrorLogIntervalUs) {
        last_error_log_us_ = now;
        SLUICE_LOG(kError, "access log ", path_, ": write failed: ", std::strerror(err), " (",
                   spare_.size(), " bytes lost; further errors within 10 s not logged)");
      }
    }
  }
  spare_.clear();
  return lost;
}

bool LogFile::reopen(std::string* error) {
  if (path_ == kStderr) return true;
  flush();  // lines logged before the rotation go to the old file
  int fd = openForAppend(path_, error);
  if (fd < 0) return false;
  ::close(fd_);
  fd_ = fd;
  return true;
}

uint64_t LogFile::dropped() const {
  uint64_t sum = 0;
  uint32_t used = slots_used_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < used; ++i) sum += slots_[i].dropped.load(std::memory_order_relaxed);
  return sum;
}

uint64_t LogFile::droppedBy(uint32_t worker) const {
  return worker < kMaxWorkers ? slots_[worker].dropped.load(std::memory_order_relaxed) : 0;
}

}  // namespace sluice::accesslog
