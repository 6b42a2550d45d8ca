#include "core/plugin/config_node.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

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

// `path` resolved against the tree's base directory: absolute stays as written.
std::string resolve(const sluice_config_node* n, std::string_view path) {
  if (path.empty()) return std::string();
  std::filesystem::path p{std::string(path)};
  if (p.is_absolute()) return std::string(path);
  std::string base = n != nullptr && n->tree != nullptr ? n->tree->baseDir() : std::string();
  if (base.empty()) base = configBaseDir("");
  return (std::filesystem::path(base) / p).lexically_normal().string();
}

std::string_view view(sluice_str s) {
  return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
}

size_t resolvePath(const sluice_config_node* n, sluice_str path, char* out, size_t capacity) {
  std::string_view in = view(path);
  if (in.find('\0') != std::string_view::npos) return 0;
  std::string resolved = resolve(n, in);
  if (resolved.empty() || out == nullptr || resolved.size() + 1 > capacity) return 0;
  std::memcpy(out, resolved.data(), resolved.size());
  out[resolved.size()] = '\0';
  return resolved.size();
}

int dependsOnFile(const sluice_config_node* n, sluice_str path) {
  if (n == nullptr || n->tree == nullptr) return -1;
  std::string_view in = view(path);
  if (in.find('\0') != std::string_view::npos) return -1;
  std::string resolved = resolve(n, in);
  if (resolved.empty()) return -1;
  FileDependency file{resolved, ""};
  std::string error;
  if (!fileSha256(resolved, &file.sha256, &error)) return -1;
  n->tree->addFile(std::move(file));
  return 0;
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

std::string configBaseDir(const std::string& config_file) {
  std::error_code ec;
  if (config_file.empty() || config_file[0] == '<') {
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    return ec ? std::string(".") : cwd.string();
  }
  std::filesystem::path absolute = std::filesystem::absolute(config_file, ec);
  return ec ? std::string(".") : absolute.parent_path().lexically_normal().string();
}

bool fileSha256(const std::string& path, std::string* hex, std::string* error) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    *error = ec ? ec.message() : std::string("not a regular file");
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = std::strerror(errno);
    return false;
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
  char buf[16384];
  while (ok && in) {
    in.read(buf, sizeof(buf));
    if (in.gcount() > 0) ok = EVP_DigestUpdate(ctx, buf, static_cast<size_t>(in.gcount())) == 1;
  }
  if (in.bad()) {
    *error = "read error";
    ok = false;
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  ok = ok && EVP_DigestFinal_ex(ctx, md, &len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) {
    if (error->empty()) *error = "cannot digest";
    return false;
  }
  static const char kHex[] = "0123456789abcdef";
  hex->clear();
  for (unsigned int i = 0; i < len; ++i) {
    *hex += kHex[md[i] >> 4];
    *hex += kHex[md[i] & 15];
  }
  return true;
}

ConfigTree::ConfigTree(const YAML::Node& root, std::string base_dir)
    : base_dir_(std::move(base_dir)) {
  absent_ = make(YAML::Node());
  root_ = make(root);
}

void ConfigTree::addFile(FileDependency file) {
  for (FileDependency& f : files_) {
    if (f.path == file.path) {
      f.sha256 = std::move(file.sha256);
      return;
    }
  }
  files_.push_back(std::move(file));
}

ConfigTree::~ConfigTree() = default;

const sluice_config_node* ConfigTree::make(const YAML::Node& node) {
  // Copy-constructs the handle (YAML::Node's operator= would assign through it instead).
  nodes_.push_back(std::make_unique<sluice_config_node>(sluice_config_node{node, this}));
  return nodes_.back().get();
}

}  // namespace sluice::plugin
