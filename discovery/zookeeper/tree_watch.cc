#include "discovery/zookeeper/tree_watch.h"

#include <utility>

namespace sluice::zookeeper {
namespace {

constexpr std::chrono::milliseconds kRetryDelay(1000);

Tree::Result resultOf(int rc) {
  if (rc == ZOK) return Tree::Result::kOk;
  if (rc == ZNONODE) return Tree::Result::kNoNode;
  return Tree::Result::kError;
}

}  // namespace

TreeWatch::TreeWatch(Tree& tree, Session& session, Loop& loop, sdk::Host host, std::string label,
                     std::function<void()> changed)
    : tree_(tree),
      session_(session),
      loop_(loop),
      host_(host),
      label_(std::move(label)),
      changed_(std::move(changed)) {}

TreeWatch::~TreeWatch() {
  if (retry_timer_ != 0) loop_.cancel(retry_timer_);
}

void TreeWatch::onConnected() { send(tree_.resync()); }

void TreeWatch::onWatch(const std::string& path) { send(tree_.onWatch(path)); }

void TreeWatch::send(const Tree::Requests& requests) {
  for (const Tree::Request& req : requests) sendOne(req);
}

void TreeWatch::sendOne(const Tree::Request& req) {
  auto check = [this, req](int rc) {
    if (rc == ZOK || rc == ZNONODE) return;
    if (errors_logged_++ < 5 || rc == ZNOAUTH) {
      host_.log(sdk::LogLevel::kWarn, label_ + ": reading " + req.path + " failed: " + zerror(rc) +
                                          "; will read it again");
    }
  };
  switch (req.op) {
    case Tree::Op::kChildren:
      session_.getChildren(req.path, true, [this, req, check](int rc, std::vector<std::string> c) {
        check(rc);
        answered(tree_.onChildren(req, resultOf(rc), c));
      });
      break;
    case Tree::Op::kData:
      session_.getData(req.path, true, [this, req, check](int rc, std::string data, int64_t) {
        check(rc);
        answered(tree_.onData(req, resultOf(rc), data));
      });
      break;
    case Tree::Op::kExists:
      session_.exists(req.path, true, [this, req, check](int rc) {
        check(rc);
        answered(tree_.onExists(req, resultOf(rc)));
      });
      break;
  }
}

void TreeWatch::answered(const Tree::Requests& more) {
  send(more);
  if (tree_.failedCount() > 0) scheduleRetry();
  if (tree_.pending() == 0 && tree_.failedCount() == 0) errors_logged_ = 0;
  changed_();
}

void TreeWatch::scheduleRetry() {
  if (retry_timer_ != 0) return;
  retry_timer_ = loop_.runAfter(kRetryDelay, [this] {
    retry_timer_ = 0;
    // While disconnected the reconnection re-reads everything; retrying now would only fail.
    if (session_.connected()) send(tree_.retryFailed());
    if (tree_.failedCount() > 0) scheduleRetry();
  });
}

}  // namespace sluice::zookeeper
