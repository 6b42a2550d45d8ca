// Test helper: a plugin config subtree from YAML text, as config_create would see it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "core/api/sdk/config.h"
#include "core/plugin/config_node.h"

namespace sluice::testing {

// Parses `yaml` ("" gives a null node, as when the YAML has no `config:`) and hands out the root
// through the host's real sluice_config_api. Lines and columns are 1-based in `yaml`.
class YamlConfig {
 public:
  // `base_dir`: where relative paths resolve ("" = the current directory).
  explicit YamlConfig(const std::string& yaml, const std::string& base_dir = "")
      : root_(yaml.empty() ? YAML::Node() : YAML::Load(yaml)), tree_(root_, base_dir) {}
  sdk::ConfigNode node() const { return sdk::ConfigNode(plugin::configApi(), tree_.root()); }
  const sluice_config_node* raw() const { return tree_.root(); }
  // What depends_on_file recorded so far.
  const std::vector<plugin::FileDependency>& files() const { return tree_.files(); }

 private:
  YAML::Node root_;
  plugin::ConfigTree tree_;
};

}  // namespace sluice::testing
