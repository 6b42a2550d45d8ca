// The host side of sluice_config_api: read-only access to a plugin's YAML config subtree
// (yaml-cpp), handed to a plugin's config_create, plus (ABI 1.2) resolve_path and
// depends_on_file. Main thread only.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "core/api/common.h"

namespace sluice::plugin {

// The accessor table (static; valid for the life of the process). Every function accepts any node
// handle a ConfigTree handed out while that tree is alive.
const sluice_config_api* configApi();

// A file a config instance depends on (sluice_config_api.depends_on_file): its resolved path and
// the SHA-256 of its content when the instance was created, lowercase hex.
struct FileDependency {
  std::string path;
  std::string sha256;
  bool operator==(const FileDependency& o) const { return path == o.path && sha256 == o.sha256; }
};

// The directory relative plugin paths are resolved against for a config read from
// `config_file` (config::Config::file, config::Mark::file): the file's directory, absolute;
// the current directory when `config_file` is empty or a "<name>" placeholder ("<embedded>").
std::string configBaseDir(const std::string& config_file);

// SHA-256 of the file's content (lowercase hex); false with *error (strerror) when it cannot
// be read or is not a regular file.
bool fileSha256(const std::string& path, std::string* hex, std::string* error);

// Owns every node handle given to a plugin during one config_create call: the root and each
// child the plugin looks up (created on demand, kept until the tree goes). Keeps `root` (and so
// every scalar string handed out) alive. Positions are reported 1-based (yaml-cpp's are 0-based).
class ConfigTree {
 public:
  // `base_dir`: where resolve_path takes relative paths from ("" = the current directory, as
  // plugin unit tests want it).
  explicit ConfigTree(const YAML::Node& root, std::string base_dir = "");
  ~ConfigTree();
  ConfigTree(const ConfigTree&) = delete;
  ConfigTree& operator=(const ConfigTree&) = delete;

  const sluice_config_node* root() const { return root_; }
  const std::string& baseDir() const { return base_dir_; }
  // The files depends_on_file declared through any node of this tree, in call order, each
  // path once (a repeated call refreshes its digest).
  const std::vector<FileDependency>& files() const { return files_; }
  std::vector<FileDependency> takeFiles() { return std::move(files_); }
  void addFile(FileDependency file);

  // Internal: a new handle for `node`, owned by this tree; and the shared handle for "absent".
  const sluice_config_node* make(const YAML::Node& node);
  const sluice_config_node* absent() const { return absent_; }

 private:
  std::vector<std::unique_ptr<sluice_config_node>> nodes_;
  const sluice_config_node* absent_ = nullptr;
  const sluice_config_node* root_ = nullptr;
  std::string base_dir_;
  std::vector<FileDependency> files_;
};

}  // namespace sluice::plugin
