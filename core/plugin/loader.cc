// Loader: finds a plugin's shared object, dlopens it and checks its descriptor before use.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "core/plugin/config_node.h"
#include "core/plugin/host_api.h"
#include "core/plugin/internal.h"
#include "core/plugin/plugin.h"

namespace sluice::plugin {
namespace {

constexpr size_t kDescriptorMin =
    offsetof(sluice_plugin_descriptor, hooks) + sizeof(sluice_plugin_descriptor::hooks);

std::string version(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// A required hook: its name and where its pointer ends in the table.
struct Required {
  const char* name;
  size_t end;
};
#define SLUICE_REQUIRED(T, field) \
  Required { #field, offsetof(T, field) + sizeof(T::field) }

// Checks the hook table (size, then required hooks) and copies it into the zero-filled `out`.
template <typename T, size_t N>
std::string copyHooks(const void* hooks, const Required (&required)[N], T* out) {
  if (hooks == nullptr) return "hook table missing (descriptor.hooks is NULL)";
  uint32_t size = *static_cast<const uint32_t*>(hooks);
  size_t need = 0;
  for (const Required& r : required) need = r.end > need ? r.end : need;
  if (size < need) {
    return "hook table too small (struct_size " + std::to_string(size) + ", need at least " +
           std::to_string(need) + ")";
  }
  std::memcpy(out, hooks, size < sizeof(T) ? size : sizeof(T));
  for (const Required& r : required) {
    void* fn = nullptr;
    std::memcpy(&fn, reinterpret_cast<const char*>(out) + r.end - sizeof(void*), sizeof(fn));
    if (fn == nullptr) return std::string("required hook '") + r.name + "' is NULL";
  }
  return "";
}

// Every check after the symbol lookup, in order; "" when the plugin passes.
std::string check(const sluice_plugin_descriptor* d, sluice_plugin_kind kind,
                  const std::string& name, sluice_plugin_descriptor* copy,
                  sluice_filter_plugin* filter, sluice_balancer_plugin* balancer,
                  sluice_discovery_plugin* discovery) {
  if (d == nullptr) return "not a sluice plugin: sluice_plugin_entry() returned NULL";
  if (d->abi_major != SLUICE_ABI_MAJOR) {
    return "ABI major mismatch: plugin built for ABI " + version(d->abi_major, d->abi_minor) +
           ", this sluice has ABI " + version(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR);
  }
  if (d->abi_minor > SLUICE_ABI_MINOR) {
    return "built against a newer ABI minor: plugin needs ABI " +
           version(d->abi_major, d->abi_minor) + ", this sluice has ABI " +
           version(SLUICE_ABI_MAJOR, SLUICE_ABI_MINOR) + " (upgrade sluice or rebuild the plugin)";
  }
  if (d->struct_size < kDescriptorMin) {
    return "descriptor too small (struct_size " + std::to_string(d->struct_size) +
           ", need at least " + std::to_string(kDescriptorMin) + ")";
  }
  std::memcpy(copy, d, d->struct_size < sizeof(*copy) ? d->struct_size : sizeof(*copy));
  if (copy->kind != kind) {
    return "wrong kind: the library is a " + internal::kindName(copy->kind) +
           " plugin, the config needs a " + internal::kindName(kind);
  }
  if (copy->name == nullptr || name != copy->name) {
    return "name mismatch: the library calls itself '" +
           std::string(copy->name != nullptr ? copy->name : "") + "', the config names '" + name +
           "'";
  }
  using F = sluice_filter_plugin;
  using B = sluice_balancer_plugin;
  using D = sluice_discovery_plugin;
  switch (kind) {
    case SLUICE_PLUGIN_KIND_FILTER:
      return copyHooks(copy->hooks,
                       {SLUICE_REQUIRED(F, config_create), SLUICE_REQUIRED(F, worker_create)},
                       filter);
    case SLUICE_PLUGIN_KIND_BALANCER:
      return copyHooks(copy->hooks,
                       {SLUICE_REQUIRED(B, config_create), SLUICE_REQUIRED(B, instance_create),
                        SLUICE_REQUIRED(B, on_host_set), SLUICE_REQUIRED(B, pick)},
                       balancer);
    default:
      return copyHooks(
          copy->hooks,
          {SLUICE_REQUIRED(D, config_create), SLUICE_REQUIRED(D, start), SLUICE_REQUIRED(D, stop)},
          discovery);
  }
}

}  // namespace

std::string Loader::notFound(const config::PluginRef& ref, sluice_plugin_kind kind) const {
  const std::string file = "lib" + ref.name + ".so";
  if (!ref.path.empty()) return "not found: no file " + ref.path + " (the entry's path:)";
  const std::string what = internal::kindName(kind);
  std::string where;
  for (const std::string& d : search_paths_) where += (where.empty() ? "" : ", ") + d;
  where = where.empty() ? "in plugin_paths (none configured)" : "in plugin_paths (" + where + ")";
  std::vector<std::string> dirs = search_paths_;
  const std::string builtin = internal::kindDir(kind);
  if (!builtin.empty()) {
    where += " and in the " + what + (kind == SLUICE_PLUGIN_KIND_DISCOVERY ? "" : "s") +
             " folder next to the sluice binary (" + builtin + ")";
    dirs.push_back(builtin);
  }
  std::string msg = "not found: looked for " + file + " and " + ref.name + "/" + file + " " + where;
  std::vector<std::string> names;
  for (const PluginFile& p : scanPlugins(dirs)) {
    if (p.kind == what && std::find(names.begin(), names.end(), p.name) == names.end()) {
      names.push_back(p.name);
    }
  }
  if (names.empty()) return msg + "; no " + what + " plugins are there";
  std::string list, best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& n : names) {
    list += (list.empty() ? "" : ", ") + n;
    size_t d = internal::editDistance(ref.name, n);
    if (d < best_distance) {
      best_distance = d;
      best = n;
    }
  }
  msg += "; " + what + " plugins there: " + list;
  // A suggestion only when it is plausibly a typo: at most a third of the name differs.
  if (best_distance <= std::max<size_t>(2, ref.name.size() / 3)) {
    msg += "; did you mean '" + best + "'?";
  }
  return msg;
}

namespace internal {

std::string where(const config::Mark& mark) {
  std::string out = mark.file.empty() ? "<config>" : mark.file;
  if (mark.line != 0) out += ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column);
  return out;
}

std::string kindName(sluice_plugin_kind kind) {
  switch (kind) {
    case SLUICE_PLUGIN_KIND_FILTER:
      return "filter";
    case SLUICE_PLUGIN_KIND_BALANCER:
      return "balancer";
    case SLUICE_PLUGIN_KIND_DISCOVERY:
      return "discovery";
    default:
      return "unknown kind " + std::to_string(kind);
  }
}

}  // namespace internal

Library::~Library() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

const sluice_filter_plugin* Library::filter() const {
  return descriptor_->kind == SLUICE_PLUGIN_KIND_FILTER ? &filter_hooks_ : nullptr;
}
const sluice_balancer_plugin* Library::balancer() const {
  return descriptor_->kind == SLUICE_PLUGIN_KIND_BALANCER ? &balancer_hooks_ : nullptr;
}
const sluice_discovery_plugin* Library::discovery() const {
  return descriptor_->kind == SLUICE_PLUGIN_KIND_DISCOVERY ? &discovery_hooks_ : nullptr;
}

Loader::Loader(std::vector<std::string> search_paths, HostTables tables)
    : search_paths_(std::move(search_paths)), tables_(tables) {}

std::vector<std::shared_ptr<const Library>> Loader::libraries() const {
  std::vector<std::shared_ptr<const Library>> out;
  for (const auto& weak : cache_) {
    if (auto lib = weak.lock()) out.push_back(std::move(lib));
  }
  return out;
}

std::shared_ptr<Library> Loader::load(const config::PluginRef& ref, sluice_plugin_kind kind,
                                      std::string* error) {
  const std::string at = internal::where(ref.mark) + ": plugin '" + ref.name + "'";
  std::vector<std::string> tried = internal::candidates(ref, kind, search_paths_);
  std::string canonical;
  const std::string path = internal::findFile(tried, &canonical);
  if (path.empty()) {
    *error = at + ": " + notFound(ref, kind);
    return nullptr;
  }
  const std::string prefix = at + " (" + path + "): ";

  internal::FileBytes file;
  std::string reason;
  if (!internal::readFile(path, &file, &reason)) {
    *error = prefix + reason;
    return nullptr;
  }

  // Already open (same file, same bytes): the checks that depend on the request run again.
  std::shared_ptr<Library> lib;
  for (auto it = cache_.begin(); it != cache_.end();) {
    std::shared_ptr<Library> cached = it->lock();
    if (cached == nullptr) {
      it = cache_.erase(it);
      continue;
    }
    if (cached->canonical_ == canonical && cached->content_hash_ == file.hash) {
      lib = std::move(cached);
    }
    ++it;
  }
  if (lib != nullptr) {
    if (lib->descriptor_->kind != kind || lib->name_ != ref.name) {
      lib = nullptr;  // refused below by a fresh check on a fresh handle
    } else {
      return lib;
    }
  }

  if (file.bytes.compare(0, 4,
                         "\x7f"
                         "ELF") != 0) {
    *error = prefix +
             "not a sluice plugin: not an ELF shared object (a plugin is a .so built "
             "against sluice's core/api headers, see docs/writing-a-filter.md)";
    return nullptr;
  }
  ::dlerror();
  std::string copy;
  void* handle = internal::openCopy(path, file, &copy);
  // dlerror() names the file dlopen() saw: the private copy, which the user never heard of.
  auto why = [&](const char* fallback) {
    const char* e = ::dlerror();
    return internal::replaceAll(e != nullptr ? e : fallback, copy, path);
  };
  if (handle == nullptr) {
    *error = prefix + "cannot be loaded: " + why("dlopen failed");
    return nullptr;
  }
  lib = std::make_shared<Library>(Library::Token());
  lib->handle_ = handle;  // dlclose()d by ~Library from here on
  lib->path_ = path;
  lib->canonical_ = canonical;
  lib->content_hash_ = file.hash;
  ::dlerror();
  void* sym = ::dlsym(handle, SLUICE_PLUGIN_ENTRY_SYMBOL);
  if (sym == nullptr) {
    *error = prefix + "not a sluice plugin: no " SLUICE_PLUGIN_ENTRY_SYMBOL " symbol (" +
             why("symbol is NULL") + ")";
    return nullptr;
  }
  auto entry = reinterpret_cast<sluice_plugin_entry_fn>(sym);
  reason = check(entry(), kind, ref.name, &lib->descriptor_copy_, &lib->filter_hooks_,
                 &lib->balancer_hooks_, &lib->discovery_hooks_);
  if (!reason.empty()) {
    *error = prefix + reason;
    return nullptr;
  }
  lib->descriptor_ = &lib->descriptor_copy_;
  lib->name_ = ref.name;
  sluice_host_api& h = lib->host_api_;
  h.struct_size = sizeof(sluice_host_api);
  h.abi_major = SLUICE_ABI_MAJOR;
  h.abi_minor = SLUICE_ABI_MINOR;
  h.log = &hostLog;
  h.host_ctx = lib.get();
  h.now_us = &hostNowUs;
  h.config = configApi();
  h.filter = kind == SLUICE_PLUGIN_KIND_FILTER ? tables_.filter : nullptr;
  h.balancer = kind == SLUICE_PLUGIN_KIND_BALANCER ? tables_.balancer : nullptr;
  h.discovery = kind == SLUICE_PLUGIN_KIND_DISCOVERY ? tables_.discovery : nullptr;
  h.metrics = metricsApi();
  cache_.push_back(lib);
  return lib;
}

}  // namespace sluice::plugin
