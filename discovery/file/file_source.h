// The polling half of the `file` discovery plugin, without threads: each poll() stats the
// endpoints file and, when it changed, reads and parses it and hands back the clusters to
// publish. Separate from the thread so tests can drive it step by step.
//
// Change detection: stat(2) of the path (following symlinks, so a Kubernetes ConfigMap's
// `..data` swap counts) gives device, inode, size and mtime (ns). Any difference means "read it
// again": an editor's rename-over or an atomic `mv` changes the inode, an in-place write changes
// size or mtime. A file whose mtime is less than kRacyWindowNs old is also re-read on the next
// polls (its content compared, not its stat), because a second write in the same mtime tick with
// the same size would otherwise go unseen. Content equal to the last content read is not parsed
// or published again (a `touch` is a no-op).
//
// Safety: the file is read through one descriptor and fstat'ed before and after; if it changed
// meanwhile, the read is thrown away and retried on the next poll. A file that fails to parse
// is logged (each error with file:line:col, once per distinct content) and nothing is published:
// the last good snapshot stays. A file that disappears is logged once and the last snapshot
// stays; when it comes back it is read again.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/api/sdk/discovery.h"
#include "core/api/sdk/host.h"
#include "discovery/file/endpoints_file.h"

namespace sluice::discovery {

// A file's identity and version, as stat(2) reports them.
struct FileStamp {
  int error = 0;  // errno when the file could not be stat'ed (then the rest is 0)
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool regular = false;  // a regular file (after following symlinks)

  bool exists() const { return error == 0; }
  bool operator==(const FileStamp& o) const {
    return error == o.error && device == o.device && inode == o.inode && size == o.size &&
           mtime_ns == o.mtime_ns && regular == o.regular;
  }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }

  // stat(2) of `path`, following symlinks.
  static FileStamp ofPath(const std::string& path);
  // fstat(2) of an open descriptor.
  static FileStamp ofFd(int fd);
};

// readStable()'s error when the file changed between its two fstat calls (read it again later).
constexpr char kChangedWhileRead[] = "changed while being read";

// Reads the whole regular file at `path` through one descriptor. Returns false with *error set
// (an strerror text, "not a regular file", "larger than 64 MiB" or kChangedWhileRead) when it
// cannot give a consistent content; *stamp is the file's fstat when the read succeeded.
bool readStable(const std::string& path, std::string* text, FileStamp* stamp, std::string* error);

// Files larger than this are refused (an endpoints file is kilobytes; this is a guard).
constexpr off_t kMaxFileBytes = off_t{64} << 20;

// How recent an mtime must be for the file to be re-read although its stat did not change.
constexpr int64_t kRacyWindowNs = 1000 * 1000 * 1000;

class FileSource {
 public:
  // `path` is used as given (make it absolute first); `host` receives the log lines.
  FileSource(std::string path, const sdk::Host& host);

  // Checks the file once. Returns the clusters to publish when a new, valid content was read;
  // nullopt otherwise (nothing changed, or the change was logged and refused). One thread only.
  std::optional<std::vector<sdk::DiscoveredCluster>> poll();

  const std::string& path() const { return path_; }

 private:
  void onMissing(const FileStamp& stamp);
  void onUnreadable(const std::string& error);
  void warn(const std::string& message) const { host_.log(sdk::LogLevel::kWarn, message); }
  void info(const std::string& message) const { host_.log(sdk::LogLevel::kInfo, message); }

  std::string path_;
  sdk::Host host_;
  std::optional<FileStamp> stamp_;  // the stat of the content last read (none before the first)
  bool racy_ = false;               // re-read even if the stamp did not change
  std::optional<std::string> last_text_;  // the content last read (good or bad)
  std::string stat_error_;                // why the last stat failed ("" = it did not)
  std::string read_error_;                // the last read failure logged ("" = none since)
  bool published_ = false;                // a snapshot was handed out at least once
  bool last_good_ = true;                 // the content last read parsed
  size_t published_clusters_ = 0;         // size of the last snapshot handed out
};

}  // namespace sluice::discovery
