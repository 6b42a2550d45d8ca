#include "discovery/file/file_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

namespace sluice::discovery {
namespace {

FileStamp fromStat(int rc, const struct stat& st) {
  FileStamp s;
  if (rc != 0) {
    s.error = errno != 0 ? errno : EIO;
    return s;
  }
  s.device = st.st_dev;
  s.inode = st.st_ino;
  s.size = st.st_size;
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.regular = S_ISREG(st.st_mode);
  return s;
}

int64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Closes a descriptor on every return path.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

FileStamp FileStamp::ofPath(const std::string& path) {
  struct stat st {};
  errno = 0;
  int rc = ::stat(path.c_str(), &st);
  return fromStat(rc, st);
}

FileStamp FileStamp::ofFd(int fd) {
  struct stat st {};
  errno = 0;
  int rc = ::fstat(fd, &st);
  return fromStat(rc, st);
}

bool readStable(const std::string& path, std::string* text, FileStamp* stamp, std::string* error) {
  // O_NONBLOCK: opening a FIFO put at the path must not hang the poller (nor stop()).
  FdCloser fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (fd.fd < 0) {
    *error = std::strerror(errno);
    return false;
  }
  FileStamp before = FileStamp::ofFd(fd.fd);
  if (!before.exists()) {
    *error = std::strerror(before.error);
    return false;
  }
  if (!before.regular) {
    *error = "not a regular file";
    return false;
  }
  if (before.size > kMaxFileBytes) {
    *error = "larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB";
    return false;
  }
  std::string out;
  out.reserve(static_cast<size_t>(before.size));
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd.fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = std::strerror(errno);
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
    if (static_cast<off_t>(out.size()) > before.size) break;  // growing: caught below
  }
  FileStamp after = FileStamp::ofFd(fd.fd);
  if (after != before || static_cast<off_t>(out.size()) != before.size) {
    *error = kChangedWhileRead;
    return false;
  }
  *text = std::move(out);
  *stamp = before;
  return true;
}

FileSource::FileSource(std::string path, const sdk::Host& host)
    : path_(std::move(path)), host_(host) {}

std::optional<std::vector<sdk::DiscoveredCluster>> FileSource::poll() {
  FileStamp now = FileStamp::ofPath(path_);
  if (!now.exists()) {
    onMissing(now);
    return std::nullopt;
  }
  if (!stat_error_.empty()) {
    info("endpoints file " + path_ + (published_ ? " is back" : " appeared") + "; reading it");
    stat_error_.clear();
    stamp_.reset();  // read it whatever its stamp says
  }
  if (stamp_.has_value() && *stamp_ == now && !racy_) return std::nullopt;

  std::string text;
  FileStamp read_stamp;
  std::string error;
  if (!readStable(path_, &text, &read_stamp, &error)) {
    // A file replaced or written while we read it is simply read again on the next poll.
    if (error != kChangedWhileRead) onUnreadable(error);
    return std::nullopt;
  }
  read_error_.clear();
  stamp_ = read_stamp;
  racy_ = realtimeNs() - read_stamp.mtime_ns < kRacyWindowNs;
  if (last_text_.has_value() && *last_text_ == text) return std::nullopt;
  last_text_ = text;

  ParsedEndpoints parsed = parseEndpoints(text);
  if (!parsed.ok()) {
    last_good_ = false;
    std::string keep = published_ ? "keeping the last good snapshot (" +
                                        std::to_string(published_clusters_) + " clusters)"
                                  : "nothing published yet";
    size_t n = parsed.errors.size();
    warn("endpoints file " + path_ + " refused (" + std::to_string(n) +
         (n == 1 ? " error); " : " errors); ") + keep);
    for (const FileError& e : parsed.errors) warn(e.format(path_));
    return std::nullopt;
  }
  info("endpoints file " + path_ + (last_good_ ? "" : " is valid again") + ": publishing " +
       std::to_string(parsed.clusters.size()) + " clusters, " +
       std::to_string(parsed.endpointCount()) + " endpoints");
  last_good_ = true;
  published_ = true;
  published_clusters_ = parsed.clusters.size();
  return std::move(parsed.clusters);
}

void FileSource::onMissing(const FileStamp& stamp) {
  std::string error = std::strerror(stamp.error);
  if (error == stat_error_) return;  // said once already
  stat_error_ = error;
  stamp_.reset();
  if (!published_) {
    info("endpoints file " + path_ + ": " + error + "; publishing nothing until it appears");
  } else {
    warn("endpoints file " + path_ + ": " + error + "; keeping the last snapshot (" +
         std::to_string(published_clusters_) + " clusters) until it comes back");
  }
}

void FileSource::onUnreadable(const std::string& error) {
  stamp_.reset();  // retry on every poll: a chmod fixes it without changing the stamp
  if (error == read_error_) return;
  read_error_ = error;
  warn("endpoints file " + path_ + " cannot be read: " + error + "; " +
       (published_ ? "keeping the last snapshot" : "nothing published yet"));
}

}  // namespace sluice::discovery
