// Certificate files changing on disk → reload (DESIGN.md §10: certificates load at start, on
// every reload, and when their files change). Main thread.
#include "core/common/log.h"
#include "core/server/bootstrap.h"
#include "core/server/file_watch.h"
#include "core/server/server.h"

namespace sluice::server {
namespace {

constexpr uint32_t kQuietMs = 200;     // a writer's burst (write, close, rename) settles
constexpr uint32_t kMaxWaitMs = 1000;  // but a file rewritten nonstop still applies

}  // namespace

void Server::updateCertWatch() {
  tls_fingerprint_ = tlsFingerprint(*built_.config);
  std::vector<std::string> files = tlsFiles(*built_.config);
  if (files.empty() || draining_) {
    cert_watch_.reset();
    return;
  }
  if (cert_watch_ != nullptr && cert_watch_->files() == files) return;
  cert_watch_ = std::make_unique<FileWatch>(base_, "tls", files, kQuietMs, kMaxWaitMs, [this] {
    if (draining_ || tlsFingerprint(*built_.config) == tls_fingerprint_) return;  // touched only
    SLUICE_LOG(kInfo, "tls: certificate files changed: reloading");
    reload("certificate files", false);
  });
}

}  // namespace sluice::server
