#include "core/plugin/config_node.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
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

std::string_view view(sluice_str s) {
  return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
}

size_t resolvePath(const sluice_config_node* n, sluice_str path, char* out, size_t capacity) {
  if (n == nullptr || n->tree == nullptr || path.len == 0 || out == nullptr) return 0;
  std::string r = n->tree->resolve(view(path));
  if (r.empty() || r.size() + 1 > capacity) return 0;
  std::memcpy(out, r.data(), r.size());
  out[r.size()] = '\0';
  return r.size();
}

int dependsOnFile(const sluice_config_node* n, sluice_str path) {
  if (n == nullptr || n->tree == nullptr || path.len == 0) return -1;
  return n->tree->addDependency(view(path)) ? 0 : -1;
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
    &resolvePath,
    &dependsOnFile,
};

}  // namespace

const sluice_config_api* configApi() { return &kConfigApi; }

std::string ConfigTree::resolve(std::string_view path) const {
  if (path.empty()) return {};
  if (path[0] == '/') return std::string(path);
  if (!base_dir_.empty()) return base_dir_ + std::string(path);
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return std::string(path);
  return std::string(cwd) + "/" + std::string(path);
}

bool ConfigTree::addDependency(std::string_view path) {
  std::string resolved = resolve(path);
  std::ifstream in(resolved, std::ios::binary);
  if (!in) return false;
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  char buf[8192];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
  }
  if (in.bad()) return false;
  for (FileDependency& f : files_) {
    if (f.path == resolved) {
      f.digest = h;
      return true;
    }
  }
  files_.push_back(FileDependency{std::move(resolved), h});
  return true;
}

ConfigTree::ConfigTree(const YAML::Node& root, const std::string& config_file) {
  size_t slash = config_file.rfind('/');
  if (slash != std::string::npos) {
    base_dir_ = config_file.substr(0, slash + 1);
  } else if (!config_file.empty()) {
    base_dir_.clear();  // a config file in the current directory
  }
  if (!base_dir_.empty() && base_dir_[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) != nullptr) base_dir_ = std::string(cwd) + "/" + base_dir_;
  }
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
