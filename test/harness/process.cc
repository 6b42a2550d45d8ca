#include "test/harness/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "test/harness/env.h"

extern char** environ;

namespace sluice::test {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadlineAfter(int timeout_ms) {
  return Clock::now() + std::chrono::milliseconds(timeout_ms);
}

void nap() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

bool canConnect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// Async-signal-safe write of a C string (for the child between fork and exec).
void writeRaw(int fd, const char* text) {
  ssize_t ignored = ::write(fd, text, std::strlen(text));
  (void)ignored;
}

}  // namespace

Process::Process(std::vector<std::string> argv, std::map<std::string, std::string> env,
                 std::string name)
    : name_(std::move(name)) {
  if (name_.empty() && !argv.empty()) name_ = argv[0].substr(argv[0].rfind('/') + 1);
  log_path_ = uniqueTmpPath(name_ + ".log");

  // Everything the child needs is built before fork(): after it, only async-signal-safe calls.
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    if (eq != std::string::npos) merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (auto& [key, value] : env) merged[key] = value;
  std::vector<std::string> env_strings;
  for (auto& [key, value] : merged) env_strings.push_back(key + "=" + value);
  std::vector<char*> argv_ptrs;
  for (std::string& arg : argv) argv_ptrs.push_back(arg.data());
  argv_ptrs.push_back(nullptr);
  std::vector<char*> env_ptrs;
  for (std::string& entry : env_strings) env_ptrs.push_back(entry.data());
  env_ptrs.push_back(nullptr);
  std::string exec_error = "harness: exec failed: " + (argv.empty() ? "" : argv[0]) + "\n";

  int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t parent = ::getpid();
  pid_ = argv.empty() || log_fd < 0 ? -1 : ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execvpe(argv_ptrs[0], argv_ptrs.data(), env_ptrs.data());
    writeRaw(2, exec_error.c_str());
    ::_exit(127);
  }
  if (pid_ > 0) ::setpgid(pid_, pid_);  // also here, so kill(-pid) works at once
  if (pid_ < 0) exited_ = true;
  if (log_fd >= 0) ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
}

namespace {

// The first line of a sanitizer report in `log` (a child built with --config=asan or tsan), or
// "". A child's report would otherwise be lost: tests rarely check a child's exit code, and one
// killed by the harness never reports its exit status.
std::string sanitizerReport(const std::string& log) {
  static const char* const kMarkers[] = {
      "WARNING: ThreadSanitizer:", "ERROR: AddressSanitizer:",
      "ERROR: LeakSanitizer:",     "SUMMARY: UndefinedBehaviorSanitizer:",
      ": runtime error: ",
  };
  for (const char* m : kMarkers) {
    size_t at = log.find(m);
    if (at == std::string::npos) continue;
    size_t begin = log.rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    return log.substr(begin, log.find('\n', at) - begin);
  }
  return "";
}

}  // namespace

Process::~Process() {
  kill();
  std::string report = sanitizerReport(output());
  if (!report.empty()) {
    ADD_FAILURE() << name_ << " (pid " << pid_ << ") reported: " << report << "\n"
                  << "full report in " << log_path_;
    std::string text = output();
    size_t at = text.find(report);
    std::fprintf(stderr, "---- %s sanitizer report:\n%s\n---- end of report\n", name_.c_str(),
                 text.substr(at, 12000).c_str());
  }
  if (::testing::Test::HasFailure()) {
    std::fprintf(stderr, "---- %s (pid %d, exit %d) log %s, last lines:\n%s---- end of %s\n",
                 name_.c_str(), static_cast<int>(pid_), exit_code_, log_path_.c_str(),
                 outputTail().c_str(), name_.c_str());
  }
}

std::string Process::output() const { return readFile(log_path_); }

std::string Process::outputTail(size_t lines) const {
  std::string text = output();
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (size_t n = 0; n < lines && pos > 0; ++n) {
    size_t nl = text.rfind('\n', pos - 1);
    pos = nl == std::string::npos ? 0 : nl;
  }
  std::string tail = text.substr(pos == 0 ? 0 : pos + 1);
  if (!tail.empty() && tail.back() != '\n') tail += '\n';
  return tail;
}

bool Process::waitForPort(int port, int timeout_ms) {
  auto deadline = deadlineAfter(timeout_ms);
  while (true) {
    if (canConnect(port)) return true;
    if (poll() || Clock::now() >= deadline) return false;
    nap();
  }
}

bool Process::waitForOutput(const std::string& text, int timeout_ms) {
  auto deadline = deadlineAfter(timeout_ms);
  while (true) {
    bool gone = poll();  // check before reading, so output written just before exit is seen
    if (output().find(text) != std::string::npos) return true;
    if (gone || Clock::now() >= deadline) return false;
    nap();
  }
}

bool Process::signal(int sig) {
  if (pid_ <= 0 || exited_) return false;
  return ::kill(pid_, sig) == 0;
}

int Process::waitExit(int timeout_ms) {
  auto deadline = deadlineAfter(timeout_ms);
  while (!poll()) {
    if (Clock::now() >= deadline) return -1;
    nap();
  }
  return exit_code_;
}

bool Process::running() { return !poll(); }

void Process::kill() {
  if (pid_ <= 0 || exited_) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exited_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool Process::poll() {
  if (exited_) return true;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return false;
  exited_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // Descendants left in the group (a daemon's children) must not outlive the test either.
  ::kill(-pid_, SIGKILL);
  return true;
}

EchoBackend::EchoBackend(const std::string& name, int workers) {
  process_ = std::make_unique<Process>(
      std::vector<std::string>{runfile("tools/echo_backend/echo_backend"), "--name", name,
                               "--listen", "127.0.0.1:0", "--workers", std::to_string(workers)},
      std::map<std::string, std::string>{}, "echo_backend-" + name);
  const std::string marker = "listening on ";
  auto deadline = deadlineAfter(10000);
  while (Clock::now() < deadline && process_->running()) {
    std::string out = process_->output();
    size_t at = out.find(marker);
    size_t eol = at == std::string::npos ? at : out.find('\n', at);
    if (eol != std::string::npos) {
      std::string line = out.substr(at, eol - at);
      port_ = std::atoi(line.c_str() + line.rfind(':') + 1);
      return;
    }
    nap();
  }
  ADD_FAILURE() << "echo_backend " << name << " did not start; log " << process_->logPath() << ":\n"
                << process_->outputTail();
}

Sluice::Sluice(const std::string& config_path, int port, std::vector<std::string> extra_args) {
  std::vector<std::string> argv{runfile("core/sluice"), "-c", config_path};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  process_ =
      std::make_unique<Process>(std::move(argv), std::map<std::string, std::string>{}, "sluice");
  ready_ = process_->waitForPort(port, 15000) && process_->running();
  if (!ready_) {
    ADD_FAILURE() << "sluice did not start listening on 127.0.0.1:" << port << "; log "
                  << process_->logPath() << ":\n"
                  << process_->outputTail();
  }
}

}  // namespace sluice::test
