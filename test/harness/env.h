// Test environment helpers: free ports, Bazel runfiles, the test temp dir, files and configs.
#pragma once

#include <map>
#include <string>

namespace sluice::test {

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed), and
// never one this process was given before (thread-safe).
// Another process may still take it before you do; prefer letting a server bind port 0 and
// report its port (EchoBackend does) when the server supports that.
int freePort();

// Locates a file of the workspace at test time: `path` is workspace-relative, e.g.
// "core/sluice" or "filters/headers/libheaders.so". Tries $TEST_SRCDIR/sluice/PATH and
// $RUNFILES_DIR/sluice/PATH (under `bazel test`; the target must be in `data`), then, walking up
// from the current directory (or $BUILD_WORKSPACE_DIRECTORY) to the WORKSPACE file, ROOT/PATH
// and ROOT/bazel-bin/PATH. Absolute paths are returned unchanged. When nothing exists, returns
// the first candidate so an error message names a sensible path.
std::string runfile(const std::string& path);

// The directory for scratch files: $TEST_TMPDIR under Bazel, else a fresh /tmp/sluice-test-PID
// (created on first use). No trailing slash.
std::string testTmpDir();

// A path under testTmpDir() that no other call of this process returned: "DIR/N-name".
std::string uniqueTmpPath(const std::string& name);

// Writes `text` to `path` atomically (temp file + rename), creating no directories. Returns
// false (and prints why to stderr) on failure.
bool writeFile(const std::string& path, const std::string& text);

// The whole content of `path`, or "" when it cannot be read.
std::string readFile(const std::string& path);

// Replaces every "${NAME}" in `text` with vars[NAME]; unknown names are left as they are.
// For config templates: substitute("address: 127.0.0.1:${PORT}", {{"PORT", "8080"}}).
std::string substitute(std::string text, const std::map<std::string, std::string>& vars);

// A YAML config file under testTmpDir(), written on construction (atomically, so a file-watching
// server never sees half a file). Left on disk for post-mortems; Bazel cleans TEST_TMPDIR.
class TempConfig {
 public:
  // Writes `yaml` to uniqueTmpPath(name).
  explicit TempConfig(const std::string& yaml, const std::string& name = "sluice.yaml");
  // Replaces the file's content (for reload tests). Returns false on failure.
  bool rewrite(const std::string& yaml);
  // Absolute path of the file, for `-c`.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace sluice::test
