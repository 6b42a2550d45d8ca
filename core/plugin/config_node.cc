#include "core/plugin/config_node.h"

#include <cstring>
#include <string>

// The opaque node handle of the C ABI: one yaml-cpp node plus its children, listed the first
// time the plugin asks for them.
struct sluice_config_node {
  YAML::Node node;
  sluice::plugin::ConfigTree* tree = nullptr;
  bool expanded = false;
  std::vector<YAML::Node> keys;                   // map keys, in file order
  std::vector<const sluice_config_node*> values;  // map values or sequence elements
};

namespace sluice::plugin {
namespace {

bool defined(const sluice_config_node* n) { return n != nullptr && n->node.IsDefined(); }

sluice_node_type nodeType(const sluice_config_node* n) {
  if (!defined(n)) return SLUICE_NODE_NULL;
  switch (n->node.Type()) {
    case YAML::NodeType::Scalar:
      return SLUICE_NODE_SCALAR;
    case YAML::NodeType::Sequence:
      return SLUICE_NODE_SEQUENCE;
    case YAML::NodeType::Map:
      return SLUICE_NODE_MAP;
    default:
      return SLUICE_NODE_NULL;
  }
}

// Lists the children once. The handles are const to the plugin but owned (mutable) here.
sluice_config_node& expand(const sluice_config_node* handle) {
  auto& n = const_cast<sluice_config_node&>(*handle);
  if (n.expanded) return n;
  n.expanded = true;
  sluice_node_type type = nodeType(&n);
  if (type != SLUICE_NODE_MAP && type != SLUICE_NODE_SEQUENCE) return n;
  for (auto it = n.node.begin(); it != n.node.end(); ++it) {
    if (type == SLUICE_NODE_MAP) {
      n.keys.push_back(it->first);
      n.values.push_back(n.tree->make(it->second));
    } else {
      n.values.push_back(n.tree->make(*it));
    }
  }
  return n;
}

sluice_str text(const YAML::Node& node) {
  if (!node.IsDefined() || !node.IsScalar()) return {nullptr, 0};
  const std::string& s = node.Scalar();  // owned by the tree's memory, which the root keeps
  return {s.data(), s.size()};
}

uint32_t position(const sluice_config_node* n, bool line) {
  if (!defined(n)) return 0;
  YAML::Mark m = n->node.Mark();
  int v = line ? m.line : m.column;
  return v >= 0 ? static_cast<uint32_t>(v) + 1 : 0;
}

const sluice_config_node* get(const sluice_config_node* n, const char* key) {
  if (n == nullptr) return nullptr;
  if (key == nullptr || nodeType(n) != SLUICE_NODE_MAP) return n->tree->absent();
  const sluice_config_node& e = expand(n);
  for (size_t i = 0; i < e.keys.size(); ++i) {
    sluice_str k = text(e.keys[i]);
    if (k.data != nullptr && k.len == std::strlen(key) && std::memcmp(k.data, key, k.len) == 0) {
      return e.values[i];
    }
  }
  return n->tree->absent();
}

size_t size(const sluice_config_node* n) { return n == nullptr ? 0 : expand(n).values.size(); }

const sluice_config_node* at(const sluice_config_node* n, size_t i) {
  if (n == nullptr) return nullptr;
  const sluice_config_node& e = expand(n);
  return i < e.values.size() ? e.values[i] : n->tree->absent();
}

sluice_str keyAt(const sluice_config_node* n, size_t i) {
  if (n == nullptr) return {nullptr, 0};
  const sluice_config_node& e = expand(n);
  return i < e.keys.size() ? text(e.keys[i]) : sluice_str{nullptr, 0};
}

const sluice_config_api kConfigApi = {
    sizeof(sluice_config_api),
    &nodeType,
    &get,
    &size,
    &at,
    &keyAt,
    [](const sluice_config_node* n) {
      return n == nullptr ? sluice_str{nullptr, 0} : text(n->node);
    },
    [](const sluice_config_node* n) { return position(n, true); },
    [](const sluice_config_node* n) { return position(n, false); },
};

}  // namespace

const sluice_config_api* configApi() { return &kConfigApi; }

ConfigTree::ConfigTree(const YAML::Node& root) {
  absent_ = make(YAML::Node());
  root_ = make(root);
}

ConfigTree::~ConfigTree() = default;

const sluice_config_node* ConfigTree::make(const YAML::Node& node) {
  // Copy-constructs the handle (YAML::Node's operator= would assign through it instead).
  nodes_.push_back(std::make_unique<sluice_config_node>(sluice_config_node{node, this}));
  return nodes_.back().get();
}

}  // namespace sluice::plugin
