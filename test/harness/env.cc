#include "test/harness/env.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

namespace sluice::test {
namespace {

constexpr char kWorkspaceName[] = "sluice";

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string envOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// The directory holding the WORKSPACE file, found by walking up from `start`; "" if none.
std::string findWorkspaceRoot(std::string start) {
  while (!start.empty()) {
    if (exists(start + "/WORKSPACE")) return start;
    size_t slash = start.rfind('/');
    if (slash == std::string::npos || slash == 0) break;
    start.resize(slash);
  }
  return "";
}

std::string currentDir() {
  char buf[4096];
  return ::getcwd(buf, sizeof(buf)) != nullptr ? buf : ".";
}

}  // namespace

int freePort() {
  // The kernel may hand the same ephemeral port out again right away (nothing holds it), so
  // one config could get two listeners on one port ("sluice did not start", seen in
  // listener_reload_test and tls_upstream_test). Never return a port twice in one process.
  static std::mutex mu;
  static std::set<int> given;
  for (int attempt = 0; attempt < 64; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
    ::close(fd);
    if (port == 0) return 0;
    std::lock_guard<std::mutex> lock(mu);
    if (given.insert(port).second) return port;
  }
  return 0;
}

std::string runfile(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  std::vector<std::string> candidates;
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    std::string dir = envOr(var, "");
    if (!dir.empty()) candidates.push_back(dir + "/" + kWorkspaceName + "/" + path);
  }
  std::string root = findWorkspaceRoot(envOr("BUILD_WORKSPACE_DIRECTORY", currentDir()));
  if (!root.empty()) {
    candidates.push_back(root + "/" + path);
    candidates.push_back(root + "/bazel-bin/" + path);
  }
  candidates.push_back(path);
  for (const std::string& candidate : candidates) {
    if (exists(candidate)) return candidate;
  }
  return candidates.front();
}

std::string testTmpDir() {
  static const std::string dir = [] {
    std::string tmp = envOr("TEST_TMPDIR", "");
    if (tmp.empty()) {
      tmp = "/tmp/sluice-test-" + std::to_string(::getpid());
      ::mkdir(tmp.c_str(), 0700);
    }
    while (tmp.size() > 1 && tmp.back() == '/') tmp.pop_back();
    return tmp;
  }();
  return dir;
}

std::string uniqueTmpPath(const std::string& name) {
  static std::atomic<int> counter{0};
  return testTmpDir() + "/" + std::to_string(++counter) + "-" + name;
}

bool writeFile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.good()) {
      std::fprintf(stderr, "writeFile: cannot write %s: %s\n", tmp.c_str(), std::strerror(errno));
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "writeFile: cannot rename to %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  return true;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string substitute(std::string text, const std::map<std::string, std::string>& vars) {
  size_t pos = 0;
  while ((pos = text.find("${", pos)) != std::string::npos) {
    size_t end = text.find('}', pos + 2);
    if (end == std::string::npos) break;
    auto it = vars.find(text.substr(pos + 2, end - pos - 2));
    if (it == vars.end()) {
      pos = end + 1;
      continue;
    }
    text.replace(pos, end - pos + 1, it->second);
    pos += it->second.size();
  }
  return text;
}

TempConfig::TempConfig(const std::string& yaml, const std::string& name)
    : path_(uniqueTmpPath(name)) {
  writeFile(path_, yaml);
}

bool TempConfig::rewrite(const std::string& yaml) { return writeFile(path_, yaml); }

}  // namespace sluice::test
