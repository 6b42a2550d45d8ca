// The mirror of the watched part of the registry, without any I/O: which nodes exist under the
// root down to the instance nodes, and the instance nodes' data. It decides which ZooKeeper
// reads to send (each with a watch) and folds their answers in; TreeWatch (tree_watch.h) sends
// them through the session and calls back. Keeping this apart makes the watch logic testable
// step by step, answer by answer, with no server.
//
// Rules:
//  - Every internal node (root, and each level above the instances) is listed with a child
//    watch; instance nodes of formats that read data are read with a data watch.
//  - A watch that fires on a node re-reads that node. A child list is diffed against the mirror:
//    new children are read, vanished ones are dropped with their subtree.
//  - A missing root (never created, or deleted) is watched with exists(); when it appears it is
//    listed again. A deleted and re-created parent is seen by its own watch or its parent's.
//  - resync() (new session, or reconnect) re-reads every node of the mirror, whose content stays
//    as it was until the answers replace it: nothing is cleared because a connection dropped.
//  - Every request carries the generation it was sent in; resync() starts a new generation and
//    answers of older ones are ignored. complete() holds when the root was answered at least
//    once and every request of the current generation is answered without error: only then is
//    the mirror a snapshot worth publishing.
// Single-threaded (the discovery's loop thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace sluice::zookeeper {

class Tree {
 public:
  enum class Op { kChildren, kData, kExists };
  struct Request {
    Op op;
    std::string path;
    uint64_t generation;
  };
  enum class Result { kOk, kNoNode, kError };
  using Requests = std::vector<Request>;

  // `levels`: see Format::levels(); `leaf_data`: whether instance nodes' data is read.
  Tree(std::string root, std::vector<std::string> levels, bool leaf_data);

  // Starts a new generation and re-reads the whole mirror from the root.
  Requests resync();
  // Answers; each request handed out must be answered once (kError for a failed send too).
  Requests onChildren(const Request& req, Result rc, const std::vector<std::string>& children);
  Requests onData(const Request& req, Result rc, const std::string& data);
  Requests onExists(const Request& req, Result rc);
  // A watch fired on `path` (node created, deleted, changed or children changed).
  Requests onWatch(const std::string& path);
  // Sends again the reads whose last answer was an error.
  Requests retryFailed();

  // The root was answered once, and nothing of the current generation is pending or failed.
  bool complete() const { return answered_root_ && pending_ == 0 && failed_.empty(); }
  // Something visible (instances, their data, first-level nodes) changed since clearDirty().
  bool dirty() const { return dirty_; }
  void clearDirty() { dirty_ = false; }
  size_t pending() const { return pending_; }
  size_t failedCount() const { return failed_.size(); }
  bool rootExists() const { return nodes_.count(root_) != 0; }
  const std::string& root() const { return root_; }

  // First-level node names (sorted).
  void forEachBranch(const std::function<void(const std::string& name)>& fn) const;
  // Instance nodes: names from the root's child down, full path, data ("" if not read).
  void forEachLeaf(
      const std::function<void(const std::vector<std::string>& names, const std::string& path,
                               const std::string& data)>& fn) const;
  size_t leafCount() const;

 private:
  struct Node {
    size_t depth = 0;
    std::vector<std::string> names;  // from the root's child down to this node
    std::set<std::string> children;  // internal nodes
    std::string data;                // instance nodes that read data
    uint64_t synced = 0;             // generation of the last read sent for it
  };

  std::string childPath(const std::string& parent, const std::string& name) const;
  void read(const std::string& path, Node& node, Requests* out);
  Request make(Op op, const std::string& path);
  void erase(const std::string& path);
  bool current(const Request& req);
  void fail(const Request& req);

  std::string root_;
  std::vector<std::string> levels_;
  bool leaf_data_;
  std::map<std::string, Node> nodes_;  // by path; the root is absent while it does not exist
  std::set<std::pair<Op, std::string>> failed_;
  uint64_t generation_ = 0;
  size_t pending_ = 0;
  bool answered_root_ = false;
  bool dirty_ = false;
};

}  // namespace sluice::zookeeper
