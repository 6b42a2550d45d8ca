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
  explicit YamlConfig(const std::string& yaml)
      : root_(yaml.empty() ? YAML::Node() : YAML::Load(yaml)), tree_(root_) {}
  sdk::ConfigNode node() const { return sdk::ConfigNode(plugin::configApi(), tree_.root()); }
  const sluice_config_node* raw() const { return tree_.root(); }

 private:
  YAML::Node root_;
  plugin::ConfigTree tree_;
};

}  // namespace sluice::testing
