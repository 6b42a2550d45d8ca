// Plugin files: where to look, and the private content-addressed copies the loader dlopen()s.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/plugin/internal.h"

namespace sluice::plugin::internal {
namespace {

bool isFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The directory holding the running executable ("" when unknown).
std::string exeDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  return dirName(std::string(buf, static_cast<size_t>(n)));
}

bool writeAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::vector<std::string> candidates(const config::PluginRef& ref, sluice_plugin_kind kind,
                                    const std::vector<std::string>& search_paths) {
  if (!ref.path.empty()) return {ref.path};
  std::vector<std::string> out;
  const std::string file = "lib" + ref.name + ".so";
  for (const std::string& dir : search_paths) {
    out.push_back(dir + "/" + file);
    out.push_back(dir + "/" + ref.name + "/" + file);
  }
  std::string exe = exeDir();
  if (!exe.empty() && kind >= SLUICE_PLUGIN_KIND_FILTER && kind <= SLUICE_PLUGIN_KIND_DISCOVERY) {
    // bazel-bin/core/sluice → bazel-bin/filters (balancers, discovery).
    const std::string dir =
        dirName(exe) + "/" + kindName(kind) + (kind == SLUICE_PLUGIN_KIND_DISCOVERY ? "" : "s");
    out.push_back(dir + "/" + file);
    out.push_back(dir + "/" + ref.name + "/" + file);
  }
  return out;
}

std::string findFile(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    if (!isFile(p)) continue;
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : p;
  }
  return "";
}

bool readFile(const std::string& path, FileBytes* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = std::string("cannot be read: ") + std::strerror(errno);
    return false;
  }
  out->bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    *error = "cannot be read: I/O error";
    return false;
  }
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : out->bytes) hash = (hash ^ c) * 1099511628211ull;
  out->hash = hash;
  return true;
}

void* openCopy(const std::string& path, const FileBytes& file) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sluice-plugin-XXXXXX";
  void* handle = nullptr;
  if (::mkdtemp(dir.data()) != nullptr) {
    char hash[17];
    std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(file.hash));
    std::string copy = dir + "/" + hash + "-" + path.substr(path.rfind('/') + 1);
    int fd = ::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    if (fd >= 0) {
      bool ok = writeAll(fd, file.bytes);
      if (::close(fd) == 0 && ok) handle = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
      ::unlink(copy.c_str());  // a mapping outlives its file
    }
    ::rmdir(dir.c_str());
  }
  if (handle != nullptr) return handle;
  ::dlerror();
  return ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
}

}  // namespace sluice::plugin::internal
