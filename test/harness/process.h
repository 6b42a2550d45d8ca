// Child processes for integration tests: spawn, watch output, signal, reap. No orphans.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sluice::test {

// A child process started on construction (fork + exec) in its own process group, with stdout
// and stderr appended to one log file under testTmpDir(). The child gets SIGKILL if the thread
// that started it dies (PR_SET_PDEATHSIG), and the destructor SIGKILLs its whole process group
// and reaps it, so a failing or crashing test leaves nothing running. When the current test has
// failed, the destructor prints the tail of the log to stderr. A sanitizer report in the log
// (ASan, LSan, UBSan, TSan: a child built with --config=asan or tsan) fails the current test
// from the destructor, with the report on stderr.
// Not thread-safe; use one Process from one thread (the one that created it).
class Process {
 public:
  // Runs argv[0] (a path; see runfile()) with arguments argv. `env` adds to or overrides the
  // inherited environment. `name` tags the log file (default: basename of argv[0]). If exec
  // fails, the child writes the reason to the log and exits 127.
  explicit Process(std::vector<std::string> argv, std::map<std::string, std::string> env = {},
                   std::string name = "");
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Process id (> 0 once started; fork failure leaves it -1 and the process "exited" with -1).
  pid_t pid() const { return pid_; }
  // Path of the combined stdout+stderr log.
  const std::string& logPath() const { return log_path_; }
  // Everything the process has written so far.
  std::string output() const;
  // The last `lines` lines of output().
  std::string outputTail(size_t lines = 40) const;

  // Waits until 127.0.0.1:`port` accepts a TCP connection. False on timeout or if the process
  // exits first.
  bool waitForPort(int port, int timeout_ms = 10000);
  // Waits until `text` appears anywhere in the output (including before the call). False on
  // timeout or if the process exits without having written it.
  bool waitForOutput(const std::string& text, int timeout_ms = 10000);
  // Sends `sig` to the process (not its group). False if it has already been reaped.
  bool signal(int sig);
  // Waits for the process to exit and reaps it: returns its exit code, 128 + N if signal N
  // killed it, or -1 on timeout (the process keeps running). Calling again after it has been
  // reaped returns the same code at once.
  int waitExit(int timeout_ms = 10000);
  // True while the process has not exited (reaps it if it just did).
  bool running();
  // SIGKILLs the process group and reaps it; no-op once reaped.
  void kill();

 private:
  // Reaps without waiting; true if the process has exited (now or before).
  bool poll();

  std::string name_;
  std::string log_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

// An echo_backend (tools/echo_backend) on 127.0.0.1, started on a port the backend picks itself
// (so no race with other tests) and ready when the constructor returns; ADD_FAILURE()s if it
// does not come up within 10 s. The test target needs `data = ["//tools/echo_backend"]`.
class EchoBackend {
 public:
  explicit EchoBackend(const std::string& name, int workers = 1);
  // The port it listens on (0 if it failed to start).
  int port() const { return port_; }
  // "127.0.0.1:PORT", for configs.
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  Process& process() { return *process_; }

 private:
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

// The proxy (core/sluice) started with `-c config_path` and `extra_args`, ready when the
// constructor returns: 127.0.0.1:`port` (a listener of the config) accepts connections.
// ADD_FAILURE()s if it does not within 15 s. The test target needs `data = ["//core:sluice"]` plus
// the plugins the config names (their directories are runfile("filters"), runfile("balancers"), for
// `plugin_paths`). Stop it with process().signal(SIGTERM) + process().waitExit() to test drain.
class Sluice {
 public:
  Sluice(const std::string& config_path, int port, std::vector<std::string> extra_args = {});
  // True when it came up.
  bool ready() const { return ready_; }
  Process& process() { return *process_; }

 private:
  std::unique_ptr<Process> process_;
  bool ready_ = false;
};

}  // namespace sluice::test
