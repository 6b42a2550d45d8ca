// The process's access log files and the one writer thread that writes them.
//
// Config builds acquire() files by path: a path already open is shared (so a reload keeps the
// files still in use open, with their buffered lines), a new one is opened (failure is a config
// error). The writer thread wakes every flush interval, or sooner when a worker's buffer is half
// full, and writes every buffered line; it reopens every file on requestReopen() (SIGUSR1) and
// closes files no listener uses any more after writing their last lines. stop() flushes what is
// left before the process exits.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/accesslog/log_file.h"

namespace sluice::accesslog {

class Registry {
 public:
  Registry() = default;
  // Stops the writer (flushing, bounded by 5 s) if it runs.
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The process-wide registry (never destroyed, so a writer stuck on a dead pipe at exit can be
  // left behind safely).
  static Registry& global();

  // The open file for `path` ("stderr" or an absolute path), opening it when no one uses it
  // yet. nullptr with *error when it cannot be opened. Main thread (config build); the file is
  // shared by everything that acquires the same path.
  std::shared_ptr<LogFile> acquire(const std::string& path, std::string* error);

  // Starts the writer thread, or, while no file is open (no access log configured), has the
  // first acquire() start it: a process without access logs runs no writer (no thread, no
  // wake-up every flush interval). A no-op when it runs. `flush_interval_ms`: the longest a line
  // waits in a buffer when traffic is light. Main thread.
  void start(uint32_t flush_interval_ms = 100);
  // Whether the writer thread runs (tests).
  bool writerRunning() const;
  // Asks the writer to reopen every file (SIGUSR1). Thread-safe; returns at once.
  void requestReopen();
  // Wakes the writer early (a worker buffer is filling up). Thread-safe and cheap: at most one
  // wake-up per writer pass.
  void wake();
  // Writes every buffered line, stops the writer and joins it, waiting at most `timeout_ms`;
  // false when the writer did not finish in time (a file that blocks, e.g. a full pipe: the
  // thread is then left behind and the lines it holds are lost). Main thread.
  bool stop(uint32_t timeout_ms);

  // Lines dropped because a worker buffer was full, since start, over every file (also the
  // closed ones). Any thread. For /stats and metrics (access_log_dropped).
  uint64_t dropped() const;
  // The same, for one worker.
  uint64_t droppedBy(uint32_t worker) const;
  // Logs a warning per file whose lines were dropped since the last report, at most once every
  // 10 s. Called by a timer on the main thread (not by the writer: a writer stuck on a file is
  // the usual reason for drops). Any thread; thread-safe.
  void reportDrops();
  // Paths open now, sorted.
  std::vector<std::string> openPaths() const;

 private:
  void run();
  void startWriterLocked();  // under mu_
  // One pass: reopen if asked, flush every file, close the unused ones, warn about drops.
  void pass(bool reopen);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  std::map<std::string, std::shared_ptr<LogFile>> files_;
  std::atomic<uint64_t> retired_dropped_[kMaxWorkers] = {};
  bool started_ = false;  // start() was called (and stop() not since)
  bool stop_ = false;
  bool done_ = false;
  bool reopen_ = false;
  std::atomic<bool> wake_pending_{false};
  uint32_t interval_ms_ = 100;
  std::thread thread_;
  // reportDrops(): drop totals already reported, per path, and when (under report_mu_).
  std::mutex report_mu_;
  std::map<std::string, uint64_t> reported_dropped_;
  uint64_t last_report_us_ = 0;
};

}  // namespace sluice::accesslog
