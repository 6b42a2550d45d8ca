#include "discovery/zookeeper/tree.h"

#include <utility>

namespace sluice::zookeeper {

Tree::Tree(std::string root, std::vector<std::string> levels, bool leaf_data)
    : root_(std::move(root)), levels_(std::move(levels)), leaf_data_(leaf_data) {}

std::string Tree::childPath(const std::string& parent, const std::string& name) const {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

Tree::Request Tree::make(Op op, const std::string& path) {
  ++pending_;
  return Request{op, path, generation_};
}

bool Tree::current(const Request& req) {
  if (req.generation != generation_) return false;
  if (pending_ > 0) --pending_;
  return true;
}

void Tree::fail(const Request& req) { failed_.emplace(req.op, req.path); }

void Tree::read(const std::string& path, Node& node, Requests* out) {
  node.synced = generation_;
  if (node.depth < levels_.size()) {
    out->push_back(make(Op::kChildren, path));
  } else if (leaf_data_) {
    out->push_back(make(Op::kData, path));
  }
}

void Tree::erase(const std::string& path) {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return;
  for (const std::string& child : it->second.children) erase(childPath(path, child));
  if (it->second.depth >= 1) dirty_ = true;
  nodes_.erase(it);
}

Tree::Requests Tree::resync() {
  ++generation_;
  pending_ = 0;
  failed_.clear();
  Requests out;
  out.push_back(make(Op::kChildren, root_));
  auto it = nodes_.find(root_);
  if (it != nodes_.end()) it->second.synced = generation_;
  return out;
}

Tree::Requests Tree::onChildren(const Request& req, Result rc,
                                const std::vector<std::string>& children) {
  Requests out;
  if (!current(req)) return out;
  bool is_root = req.path == root_;
  if (rc == Result::kError) {
    fail(req);
    return out;
  }
  if (rc == Result::kNoNode) {
    erase(req.path);
    if (is_root) {
      answered_root_ = true;
      out.push_back(make(Op::kExists, root_));
    }
    return out;
  }
  auto it = nodes_.find(req.path);
  if (it == nodes_.end()) {
    if (!is_root) return out;  // dropped meanwhile; its parent's answer decides
    it = nodes_.emplace(root_, Node{}).first;
    it->second.synced = generation_;
  }
  if (is_root) answered_root_ = true;
  Node& node = it->second;
  if (node.depth >= levels_.size()) return out;
  const std::string& only = levels_[node.depth];
  std::set<std::string> now;
  for (const std::string& c : children) {
    // "/zookeeper" is the server's own subtree, never part of a registry rooted at "/".
    if (req.path == "/" && c == "zookeeper") continue;
    if (only.empty() || c == only) now.insert(c);
  }
  std::vector<std::string> gone;
  for (const std::string& c : node.children) {
    if (now.count(c) == 0) gone.push_back(c);
  }
  std::vector<std::string> parent_names = node.names;
  size_t depth = node.depth;
  node.children = now;  // `node` may move below (map insertions do not move, but be plain)
  for (const std::string& c : gone) erase(childPath(req.path, c));
  for (const std::string& c : now) {
    std::string path = childPath(req.path, c);
    auto [child, added] = nodes_.try_emplace(path);
    if (added) {
      child->second.depth = depth + 1;
      child->second.names = parent_names;
      child->second.names.push_back(c);
      if (depth + 1 == 1 || depth + 1 == levels_.size()) dirty_ = true;
    }
    if (added || child->second.synced < generation_) read(path, child->second, &out);
  }
  return out;
}

Tree::Requests Tree::onData(const Request& req, Result rc, const std::string& data) {
  Requests out;
  if (!current(req)) return out;
  if (rc == Result::kError) {
    fail(req);
    return out;
  }
  if (rc == Result::kNoNode) {
    // Deleted: the parent's child watch reports it too; dropping it now is the same outcome.
    erase(req.path);
    return out;
  }
  auto it = nodes_.find(req.path);
  if (it == nodes_.end()) return out;
  if (it->second.data != data) {
    it->second.data = data;
    dirty_ = true;
  }
  return out;
}

Tree::Requests Tree::onExists(const Request& req, Result rc) {
  Requests out;
  if (!current(req)) return out;
  if (rc == Result::kError) {
    fail(req);
  } else if (rc == Result::kOk) {
    out.push_back(make(Op::kChildren, root_));  // created between our two reads
  }
  return out;
}

Tree::Requests Tree::onWatch(const std::string& path) {
  Requests out;
  if (path == root_) {
    out.push_back(make(Op::kChildren, root_));
    return out;
  }
  auto it = nodes_.find(path);
  if (it != nodes_.end()) read(path, it->second, &out);
  return out;
}

Tree::Requests Tree::retryFailed() {
  Requests out;
  std::set<std::pair<Op, std::string>> failed;
  failed.swap(failed_);
  for (const auto& [op, path] : failed) {
    if (path == root_ || nodes_.count(path) != 0) out.push_back(make(op, path));
  }
  return out;
}

void Tree::forEachBranch(const std::function<void(const std::string&)>& fn) const {
  auto it = nodes_.find(root_);
  if (it == nodes_.end()) return;
  for (const std::string& c : it->second.children) fn(c);
}

void Tree::forEachLeaf(const std::function<void(const std::vector<std::string>&, const std::string&,
                                                const std::string&)>& fn) const {
  for (const auto& [path, node] : nodes_) {
    if (node.depth == levels_.size()) fn(node.names, path, node.data);
  }
}

size_t Tree::leafCount() const {
  size_t n = 0;
  for (const auto& entry : nodes_) n += entry.second.depth == levels_.size() ? 1 : 0;
  return n;
}

}  // namespace sluice::zookeeper
