// Listing the plugins that exist on disk (sluice --plugins, and "did you mean" in not-found
// errors): every lib*.so of a directory and of its subdirectories, opened long enough to read
// its descriptor.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/plugin/internal.h"
#include "core/plugin/plugin.h"

namespace sluice::plugin {
namespace {

bool isPluginFileName(const std::string& name) {
  return name.size() > 6 && name.rfind("lib", 0) == 0 &&
         name.compare(name.size() - 3, 3, ".so") == 0;
}

// D/lib*.so and D/*/lib*.so, sorted.
std::vector<std::string> pluginFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && isPluginFileName(name)) {
      out.push_back(path);
    } else if (S_ISDIR(st.st_mode)) {
      std::string inner = path + "/lib" + name + ".so";
      if (::stat(inner.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(inner);
    }
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Reads the descriptor of `path` (nothing past the fields every 1.x descriptor has); false when
// it is no sluice plugin.
bool probe(const std::string& path, PluginFile* out) {
  internal::FileBytes bytes;
  std::string ignored;
  if (!internal::readFile(path, &bytes, &ignored)) return false;
  if (bytes.bytes.compare(0, 4,
                          "\x7f"
                          "ELF") != 0)
    return false;
  void* handle = internal::openCopy(path, bytes);
  if (handle == nullptr) return false;
  bool ok = false;
  if (void* sym = ::dlsym(handle, SLUICE_PLUGIN_ENTRY_SYMBOL)) {
    const sluice_plugin_descriptor* d = reinterpret_cast<sluice_plugin_entry_fn>(sym)();
    if (d != nullptr && d->struct_size >= offsetof(sluice_plugin_descriptor, hooks)) {
      out->abi_major = d->abi_major;
      out->abi_minor = d->abi_minor;
      out->kind = internal::kindName(d->kind);
      out->name = d->name != nullptr ? d->name : "";
      out->version = d->version != nullptr ? d->version : "";
      out->file = path;
      ok = !out->name.empty();
    }
  }
  ::dlclose(handle);
  return ok;
}

}  // namespace

std::string builtinPluginDir(sluice_plugin_kind kind) { return internal::kindDir(kind); }

std::vector<PluginFile> scanPlugins(const std::vector<std::string>& dirs) {
  std::vector<PluginFile> out;
  std::set<std::string> seen;  // canonical paths
  for (const std::string& dir : dirs) {
    for (const std::string& file : pluginFilesIn(dir)) {
      std::string canonical;
      std::string found = internal::findFile({file}, &canonical);
      if (found.empty() || !seen.insert(canonical).second) continue;
      PluginFile p;
      if (probe(found, &p)) out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace sluice::plugin
