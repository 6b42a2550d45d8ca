// Drives the mirror (tree.h) through the session (session.h): sends the reads the tree asks
// for, with watches, and folds the answers and watch events back in. Loop thread only.
//
// Errors: an answer that is neither ZOK nor ZNONODE (connection loss, timeout, no auth) marks the
// node failed; failed reads are sent again every second while connected, and everything is read
// again on each (re)connection. Nothing is dropped from the mirror because of an error.
#pragma once

#include <functional>
#include <string>

#include "discovery/zookeeper/loop.h"
#include "discovery/zookeeper/session.h"
#include "discovery/zookeeper/tree.h"

namespace sluice::zookeeper {

class TreeWatch {
 public:
  // `changed` runs after every answer that was folded in (check tree().complete()/dirty()).
  TreeWatch(Tree& tree, Session& session, Loop& loop, sdk::Host host, std::string label,
            std::function<void()> changed);
  ~TreeWatch();

  // Session events, forwarded by the owner.
  void onConnected();
  void onWatch(const std::string& path);

  const Tree& tree() const { return tree_; }

 private:
  void send(const Tree::Requests& requests);
  void sendOne(const Tree::Request& req);
  void answered(const Tree::Requests& more);
  void scheduleRetry();

  Tree& tree_;
  Session& session_;
  Loop& loop_;
  sdk::Host host_;
  std::string label_;
  std::function<void()> changed_;
  uint64_t retry_timer_ = 0;
  size_t errors_logged_ = 0;
};

}  // namespace sluice::zookeeper
