// One access log destination (a file, or stderr) shared by every listener that names its path,
// with one bounded line buffer per worker. Workers append formatted lines (a short lock on
// their own buffer, never I/O); the writer thread (registry.h) swaps each buffer out and writes
// it. A worker whose buffer is full drops the line and counts it: the request path never waits
// on disk.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace sluice::accesslog {

class Registry;

// The most workers a config may ask for (config: workers 1..256).
inline constexpr uint32_t kMaxWorkers = 256;

class LogFile {
 public:
  // Opens `path` for appending (created with mode 0644 when missing); "stderr" is the process's
  // standard error. Returns nullptr and sets *error ("Permission denied", ...) on failure.
  // Main thread (config build). `owner` (may be null) is woken when a buffer fills up.
  static std::unique_ptr<LogFile> open(const std::string& path, Registry* owner,
                                       std::string* error);
  // Use open(). The key keeps others from constructing one.
  class Key {
    friend class LogFile;
    Key() = default;
  };
  LogFile(Key, std::string path, int fd, Registry* owner);
  ~LogFile();  // writes nothing; closes the file (never stderr)
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  const std::string& path() const { return path_; }

  // Worker `worker` (< kMaxWorkers) hands over one whole line (newline included). It is kept
  // unless that worker's buffer would then hold more than `limit` bytes; then it is dropped and
  // counted. Returns false when dropped. Worker thread; never blocks on I/O.
  bool append(uint32_t worker, std::string_view line, size_t limit);

  // Writes every worker's buffered lines (blocking write(2)). Writer thread only. Returns the
  // bytes that could not be written (write errors are logged, rate-limited).
  uint64_t flush();
  // Opens the path again and switches to the new file after flushing to the old one (SIGUSR1,
  // after logrotate renamed the file). On failure keeps the old file and sets *error. A no-op
  // for stderr. Writer thread only.
  bool reopen(std::string* error);

  // Lines dropped so far (all workers) and by one worker. Any thread.
  uint64_t dropped() const;
  uint64_t droppedBy(uint32_t worker) const;

 private:
  struct Slot {
    std::mutex mu;                     // held for an append or a swap only
    std::string pending;               // whole lines waiting for the writer
    std::atomic<uint64_t> dropped{0};  // written by its worker only
  };

  bool writeAll(std::string_view data);

  std::string path_;
  int fd_;  // the writer thread's, after open()
  Registry* owner_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint32_t> slots_used_{0};  // 1 + the highest worker index that appended
  std::string spare_;                    // writer-only: swapped with a slot's buffer
  uint64_t last_error_log_us_ = 0;
};

}  // namespace sluice::accesslog
