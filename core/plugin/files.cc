// Plugin files: where to look, and the private content-addressed copies the loader dlopen()s.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

std::string& executablePath() {
  static std::string path;  // set once by main before any thread starts
  return path;
}

// `path` made absolute against the working directory and lexically normalised ("." and ".."
// segments and doubled slashes removed), symbolic links kept.
std::string absolute(const std::string& path) {
  std::string full = path;
  if (full.empty() || full[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) return path;
    full = std::string(cwd) + "/" + full;
  }
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= full.size()) {
    size_t j = full.find('/', i);
    if (j == std::string::npos) j = full.size();
    std::string seg = full.substr(i, j - i);
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!seg.empty() && seg != ".") {
      parts.push_back(seg);
    }
    i = j + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

// The directory holding the running executable, as the user started it: argv[0] when it names
// a path (bazel-bin/core/sluice stays that, not the cache directory bazel-bin links to), else
// /proc/self/exe (found through $PATH). "" when unknown.
std::string exeDir() {
  const std::string& argv0 = executablePath();
  if (argv0.find('/') != std::string::npos) return dirName(absolute(argv0));
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
  const std::string dir = kindDir(kind);
  if (!dir.empty()) {
    out.push_back(dir + "/" + file);
    out.push_back(dir + "/" + ref.name + "/" + file);
  }
  return out;
}

std::string kindDir(sluice_plugin_kind kind) {
  std::string exe = exeDir();
  if (exe.empty() || kind < SLUICE_PLUGIN_KIND_FILTER || kind > SLUICE_PLUGIN_KIND_DISCOVERY) {
    return "";
  }
  // bazel-bin/core/sluice → bazel-bin/filters; /opt/sluice/bin/sluice → /opt/sluice/filters.
  return dirName(exe) + "/" + kindName(kind) + (kind == SLUICE_PLUGIN_KIND_DISCOVERY ? "" : "s");
}

std::string findFile(const std::vector<std::string>& paths, std::string* canonical) {
  for (const std::string& p : paths) {
    if (!isFile(p)) continue;
    if (canonical != nullptr) {
      char buf[PATH_MAX];
      *canonical = ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : p;
    }
    return absolute(p);
  }
  return "";
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
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

void* openCopy(const std::string& path, const FileBytes& file, std::string* copy_path) {
  if (copy_path != nullptr) copy_path->clear();
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
      if (copy_path != nullptr) *copy_path = copy;
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

namespace sluice::plugin {

void setExecutablePath(const std::string& argv0) { internal::executablePath() = argv0; }

}  // namespace sluice::plugin
