// The host side of sluice_config_api: read-only access to a plugin's YAML config subtree
// (yaml-cpp), handed to a plugin's config_create. Main thread only.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/api/common.h"

namespace sluice::plugin {

// The accessor table (static; valid for the life of the process). Every function accepts any node
// handle a ConfigTree handed out while that tree is alive.
const sluice_config_api* configApi();

// Owns every node handle given to a plugin during one config_create call: the root and each
// child the plugin looks up (created on demand, kept until the tree goes). Keeps `root` (and so
// every scalar string handed out) alive. Positions are reported 1-based (yaml-cpp's are 0-based).
// A file a config instance depends on (depends_on_file): its resolved path and the FNV-1a 64
// digest of its content when the instance was made. A reload rebuilds the instance (instead of
// keeping the running one) when a digest differs.
struct FileDependency {
  std::string path;
  uint64_t digest = 0;
  bool operator==(const FileDependency& o) const { return path == o.path && digest == o.digest; }
};

class ConfigTree {
 public:
  // `config_file`: the file the node came from (relative paths resolve against its directory;
  // empty: the current directory).
  explicit ConfigTree(const YAML::Node& root, const std::string& config_file = "");
  ~ConfigTree();
  ConfigTree(const ConfigTree&) = delete;
  ConfigTree& operator=(const ConfigTree&) = delete;

  const sluice_config_node* root() const { return root_; }

  // Internal: a new handle for `node`, owned by this tree; and the shared handle for "absent".
  const sluice_config_node* make(const YAML::Node& node);
  const sluice_config_node* absent() const { return absent_; }

  // resolve_path / depends_on_file (ABI 1.2).
  std::string resolve(std::string_view path) const;
  bool addDependency(std::string_view path);
  std::vector<FileDependency> takeDependencies() { return std::move(files_); }

 private:
  std::string base_dir_;  // with a trailing '/', or empty
  std::vector<FileDependency> files_;
  std::vector<std::unique_ptr<sluice_config_node>> nodes_;
  const sluice_config_node* absent_ = nullptr;
  const sluice_config_node* root_ = nullptr;
};

}  // namespace sluice::plugin
