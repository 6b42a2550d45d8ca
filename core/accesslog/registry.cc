#include "core/accesslog/registry.h"

#include <time.h>

#include <chrono>

#include "core/common/log.h"

namespace sluice::accesslog {
namespace {

constexpr uint64_t kWarnIntervalUs = 10 * 1000000ull;

uint64_t monoUs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

}  // namespace

Registry::~Registry() {
  if (thread_.joinable()) stop(5000);
}

Registry& Registry::global() {
  static Registry* registry = std::make_unique<Registry>().release();  // never destroyed
  return *registry;
}

std::shared_ptr<LogFile> Registry::acquire(const std::string& path, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  std::unique_ptr<LogFile> file = LogFile::open(path, this, error);
  if (file == nullptr) return nullptr;
  std::shared_ptr<LogFile> shared(std::move(file));
  files_.emplace(path, shared);
  if (started_) startWriterLocked();
  return shared;
}

void Registry::start(uint32_t flush_interval_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  interval_ms_ = flush_interval_ms == 0 ? 1 : flush_interval_ms;
  started_ = true;
  if (!files_.empty()) startWriterLocked();
}

bool Registry::writerRunning() const {
  std::lock_guard<std::mutex> lock(mu_);
  return thread_.joinable();
}

void Registry::startWriterLocked() {
  if (thread_.joinable()) return;
  stop_ = false;
  done_ = false;
  thread_ = std::thread([this] {
    log::setThreadName("access log");
    run();
  });
}

void Registry::requestReopen() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    reopen_ = true;
  }
  cv_.notify_one();
}

void Registry::wake() {
  if (wake_pending_.exchange(true, std::memory_order_relaxed)) return;
  cv_.notify_one();
}

bool Registry::stop(uint32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  started_ = false;
  if (!thread_.joinable()) return true;
  stop_ = true;
  cv_.notify_one();
  bool finished =
      done_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return done_; });
  lock.unlock();
  if (finished) {
    thread_.join();
  } else {
    SLUICE_LOG(kError, "access log: the writer did not finish within ", timeout_ms,
               " ms (a log file blocks writes); its buffered lines are lost");
    thread_.detach();
  }
  return finished;
}

void Registry::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] {
      return stop_ || reopen_ || wake_pending_.load(std::memory_order_relaxed);
    });
    bool reopen = reopen_;
    reopen_ = false;
    wake_pending_.store(false, std::memory_order_relaxed);
    lock.unlock();
    pass(reopen);
    lock.lock();
  }
  lock.unlock();
  pass(false);  // the last lines, after the workers stopped
  lock.lock();
  done_ = true;
  done_cv_.notify_all();
}

void Registry::pass(bool reopen) {
  std::vector<std::shared_ptr<LogFile>> files;
  {
    std::lock_guard<std::mutex> lock(mu_);
    files.reserve(files_.size());
    for (auto& [path, file] : files_) files.push_back(file);
  }
  for (auto& file : files) {
    std::string error;
    if (reopen && !file->reopen(&error)) {
      SLUICE_LOG(kError, "access log ", file->path(), ": cannot reopen: ", error,
                 " (still writing to the file open before)");
    }
    file->flush();
  }
  files.clear();
  // Files no listener holds any more (only the registry does): they get their last lines and
  // close. acquire() hands out new references under mu_, so a count of 1 cannot grow here.
  std::vector<std::shared_ptr<LogFile>> unused;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = files_.begin(); it != files_.end();) {
      if (it->second.use_count() == 1) {
        for (uint32_t w = 0; w < kMaxWorkers; ++w) {
          uint64_t d = it->second->droppedBy(w);
          if (d != 0) retired_dropped_[w].fetch_add(d, std::memory_order_relaxed);
        }
        unused.push_back(std::move(it->second));
        it = files_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& file : unused) {
    file->flush();
    SLUICE_LOG(kInfo, "access log ", file->path(), " closed (no listener uses it any more)");
  }
}

void Registry::reportDrops() {
  std::vector<std::shared_ptr<LogFile>> files;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [path, file] : files_) files.push_back(file);
  }
  std::lock_guard<std::mutex> lock(report_mu_);
  uint64_t now = monoUs();
  if (last_report_us_ != 0 && now - last_report_us_ < kWarnIntervalUs) return;
  for (const auto& file : files) {
    uint64_t total = file->dropped();
    uint64_t& reported = reported_dropped_[file->path()];
    if (total < reported) reported = 0;  // a new file at a path that was closed before
    if (total == reported) continue;
    SLUICE_LOG(kWarn, "access log ", file->path(), ": ", total - reported,
               " lines dropped (worker buffers full: the file cannot keep up); ", total,
               " in all. Further drops are reported at most every 10 s");
    reported = total;
    last_report_us_ = now;
  }
}

uint64_t Registry::dropped() const {
  uint64_t sum = 0;
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t w = 0; w < kMaxWorkers; ++w) {
    sum += retired_dropped_[w].load(std::memory_order_relaxed);
  }
  for (const auto& [path, file] : files_) sum += file->dropped();
  return sum;
}

uint64_t Registry::droppedBy(uint32_t worker) const {
  if (worker >= kMaxWorkers) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t sum = retired_dropped_[worker].load(std::memory_order_relaxed);
  for (const auto& [path, file] : files_) sum += file->droppedBy(worker);
  return sum;
}

std::vector<std::string> Registry::openPaths() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [path, file] : files_) out.push_back(path);
  return out;
}

}  // namespace sluice::accesslog
