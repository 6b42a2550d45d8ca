// Plugin host: finds, opens and checks plugin shared objects, and turns a config::PluginRef into
// a validated config instance (the plugin's config_create). Main thread only, except where noted.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/api/balancer.h"
#include "core/api/common.h"
#include "core/api/discovery.h"
#include "core/api/filter.h"
#include "core/config/config.h"
#include "core/plugin/config_node.h"
#include "core/plugin/metrics.h"
#include "core/stats/families.h"

namespace sluice::plugin {

// The kind-specific host tables the core implements (proxy stream accessors, balancer host
// state, discovery sink). Borrowed: must outlive every Library.
struct HostTables {
  const sluice_filter_host_api* filter = nullptr;
  const sluice_balancer_host_api* balancer = nullptr;
  const sluice_discovery_host_api* discovery = nullptr;
};

// One dlopen'ed plugin (RTLD_NOW | RTLD_LOCAL) whose descriptor passed every ABI check.
// dlclose()d when the last reference goes; config instances hold a reference.
class Library {
 public:
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // The file as found (absolute, symbolic links kept: the path the user configured or knows).
  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  // FNV-1a 64 of the file's bytes as loaded (the name of its private content-addressed copy).
  uint64_t contentHash() const { return content_hash_; }
  const sluice_plugin_descriptor& descriptor() const { return *descriptor_; }
  // The host table handed to this plugin's hooks (log tagged with the plugin's name).
  const sluice_host_api* hostApi() const { return &host_api_; }

  // Hook tables; nullptr unless the plugin is of that kind.
  const sluice_filter_plugin* filter() const;
  const sluice_balancer_plugin* balancer() const;
  const sluice_discovery_plugin* discovery() const;

  // Where metrics declared now go: set by createFilter/createBalancer/createDiscovery around
  // the plugin's config_create (main thread); nullptr outside it.
  PluginMetrics* declaring() const { return declaring_; }
  void setDeclaring(PluginMetrics* into) { declaring_ = into; }

  // Only the Loader makes Libraries: it alone can construct a Token.
  class Token {
    friend class Loader;
    Token() {}  // user-provided, so `Token{}` is no aggregate loophole
  };
  explicit Library(Token) {}

 private:
  friend class Loader;
  void* handle_ = nullptr;
  std::string path_;           // the file found, not the private copy dlopen()ed
  std::string canonical_;      // its realpath(): the file's identity in the cache
  uint64_t content_hash_ = 0;  // of the bytes loaded; a changed file is a new Library
  std::string name_;
  const sluice_plugin_descriptor* descriptor_ = nullptr;  // &descriptor_copy_
  sluice_host_api host_api_{};
  // The plugin's descriptor and hook table copied into full-size, zero-filled structs, so fields
  // beyond the plugin's struct_size (built against an older minor) read as NULL/0.
  sluice_plugin_descriptor descriptor_copy_{};
  sluice_filter_plugin filter_hooks_{};
  sluice_balancer_plugin balancer_hooks_{};
  sluice_discovery_plugin discovery_hooks_{};
  PluginMetrics* declaring_ = nullptr;
};

// Finds plugins by name in search paths and opens them, caching by resolved path and content.
//
// Hot swap: the loader never dlopen()s the file it found. It reads it and, unless a Library with
// the same path and content hash is open, writes an identical copy named by the hash into a fresh
// private directory (mkdtemp under $TMPDIR or /tmp), dlopen()s the copy and removes the copy and
// the directory at once (nothing is left behind). So a plugin rebuilt or replaced at the same path
// loads beside the old one (glibc would otherwise hand back the old, already-loaded object by
// name), while an unchanged file maps to the Library already open. When the private copy cannot be
// made or mapped (e.g. a noexec /tmp) the file is opened in place instead.
class Loader {
 public:
  // `search_paths` are directories; for a plugin named N each directory D is tried as
  // D/libN.so, then D/N/libN.so. The built-in fallback (the kind's directory next to the sluice
  // executable's: ../filters, ../balancers or ../discovery) is tried last.
  Loader(std::vector<std::string> search_paths, HostTables tables);
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Opens the plugin `ref` names (or ref.path when set) and checks it is a sluice plugin of
  // `kind` with a compatible ABI. On failure returns nullptr and sets *error to one line:
  // "<config file>:<line>:<col>: plugin '<name>' (<so path>): <reason>" where reason is one of:
  // not an ELF shared object, not a sluice plugin (no sluice_plugin_entry symbol, with
  // dlerror), ABI major mismatch (both versions), built against a newer ABI minor, descriptor or
  // hook table too small, wrong kind (both kinds), name mismatch, a required hook missing (named).
  // Checked in that order; nothing beyond the checked sizes is read. <so path> is the user's
  // file, never the private copy. Not found: "<file>:<line>:<col>: plugin '<name>': not found:
  // looked for lib<name>.so and <name>/lib<name>.so in plugin_paths (...) and in the <kind>s
  // folder next to the sluice binary (...); <kind> plugins there: a, b; did you mean 'x'?".
  std::shared_ptr<Library> load(const config::PluginRef& ref, sluice_plugin_kind kind,
                                std::string* error);

  // Replaces the search paths (a reload with a changed plugin_paths). Libraries already open
  // stay open; the cache still maps an unchanged file to its open Library.
  void setSearchPaths(std::vector<std::string> search_paths) {
    search_paths_ = std::move(search_paths);
  }
  const std::vector<std::string>& searchPaths() const { return search_paths_; }
  // Every Library still open (something holds it), in load order.
  std::vector<std::shared_ptr<const Library>> libraries() const;

 private:
  // The reason of a not-found error: where it looked, what is there, the closest name.
  std::string notFound(const config::PluginRef& ref, sluice_plugin_kind kind) const;

  std::vector<std::string> search_paths_;
  HostTables tables_;
  std::vector<std::weak_ptr<Library>> cache_;
};

// The sluice executable as it was started (argv[0]): the built-in plugin folders are found
// beside it and named as the user knows them (bazel-bin/filters, not the build cache bazel-bin
// links to). main() calls it before anything loads; unset, /proc/self/exe is used.
void setExecutablePath(const std::string& argv0);
// The built-in folder of `kind` (the executable's directory's sibling "filters", "balancers"
// or "discovery"); "" when unknown.
std::string builtinPluginDir(sluice_plugin_kind kind);

// A sluice plugin file found on disk.
struct PluginFile {
  std::string name;     // as its descriptor says
  std::string kind;     // "filter", "balancer", "discovery"
  std::string version;  // the plugin's own version string
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;  // the ABI it was built against
  std::string file;        // as found (symbolic links kept)
};

// Every sluice plugin in `dirs`: D/lib*.so and D/N/libN.so, in directory order then by file
// name, each file once. Each is opened (a private copy, as Loader does) long enough to read
// its descriptor; files that are no sluice plugin are left out. Main thread.
std::vector<PluginFile> scanPlugins(const std::vector<std::string>& dirs);

// Plugin hooks whose failures are counted (sluice_plugin_hook_errors_total{plugin, hook}).
enum class Hook { kWorkerCreate, kStreamCreate, kStopWithoutReply, kInstanceCreate, kStart };
inline constexpr const char* kHookNames[] = {"worker_create", "stream_create", "stop_without_reply",
                                             "instance_create", "start"};

// A validated config instance of a plugin: config_create succeeded. config_destroy runs when
// the last reference goes (the owner must make that happen on the main thread); the metrics its
// config_create declared stay valid until config_destroy has returned.
template <typename Hooks>
class Instance {
 public:
  Instance(std::shared_ptr<Library> library, const Hooks* hooks, void* config, std::string name,
           PluginMetrics metrics = {}, std::vector<FileDependency> files = {})
      : library_(std::move(library)),
        hooks_(hooks),
        config_(config),
        name_(std::move(name)),
        metrics_(std::move(metrics)),
        files_(std::move(files)) {
    // The hooks of this kind that can fail, resolved now (counted later on any thread).
    std::vector<Hook> fallible;
    if constexpr (std::is_same_v<Hooks, sluice_filter_plugin>) {
      fallible = {Hook::kWorkerCreate, Hook::kStreamCreate, Hook::kStopWithoutReply};
      // The table is the loader's zero-filled copy: NULL for plugins before ABI 1.3.
      if (hooks_ != nullptr && hooks_->unused_hooks != nullptr) {
        unused_hooks_ = hooks_->unused_hooks(config_);
      }
    } else if constexpr (std::is_same_v<Hooks, sluice_balancer_plugin>) {
      fallible = {Hook::kInstanceCreate};
    } else {
      fallible = {Hook::kStart};
    }
    for (Hook h : fallible) {
      hook_errors_[static_cast<size_t>(h)] = stats::defaultRegistry().counter(
          stats::kPluginHookErrors, {name_, kHookNames[static_cast<size_t>(h)]});
    }
  }
  ~Instance() {
    if (hooks_ != nullptr && hooks_->config_destroy != nullptr) hooks_->config_destroy(config_);
  }
  // Counts a failure of `hook` (one of this kind's). Any thread; no lock.
  void hookFailed(Hook hook) const { hook_errors_[static_cast<size_t>(hook)].inc(); }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  const Hooks& hooks() const { return *hooks_; }
  void* config() const { return config_; }
  // Filters: the SLUICE_HOOK_* bits of the hooks streams through this instance never need
  // (sluice_filter_plugin.unused_hooks, asked once at construction); 0 for other kinds.
  uint32_t unusedHooks() const { return unused_hooks_; }
  const std::string& name() const { return name_; }
  const Library& library() const { return *library_; }
  // The files its config_create declared (depends_on_file), with their digests then.
  const std::vector<FileDependency>& files() const { return files_; }

 private:
  std::shared_ptr<Library> library_;
  const Hooks* hooks_;
  void* config_;
  std::string name_;
  PluginMetrics metrics_;
  std::vector<FileDependency> files_;
  uint32_t unused_hooks_ = 0;
  stats::Counter hook_errors_[std::size(kHookNames)];
};

using FilterConfig = Instance<sluice_filter_plugin>;
using BalancerConfig = Instance<sluice_balancer_plugin>;
using DiscoveryConfig = Instance<sluice_discovery_plugin>;

// Why an instance built from the same YAML and library as `old` is not the same: the first file
// either depends on whose digest differs (or that only one of them depends on), as
// "<path> changed"; "" when both depend on the same files with the same content.
std::string changedFile(const std::vector<FileDependency>& old,
                        const std::vector<FileDependency>& next);

// Load the plugin and run its config_create on ref.config. Relative paths the plugin resolves
// (resolve_path) are taken against the directory of ref.mark.file (the config file). On failure
// returns nullptr and sets *error to the load() error, or, when the plugin refused its config, to
// "<file>:<line>:<col>: plugin '<name>' (<so path>): <the plugin's message>" pointing at the
// node the plugin named (else at its config block, else at the plugin entry).
std::shared_ptr<FilterConfig> createFilter(Loader& loader, const config::PluginRef& ref,
                                           std::string* error);
std::shared_ptr<BalancerConfig> createBalancer(Loader& loader, const config::PluginRef& ref,
                                               std::string* error);
std::shared_ptr<DiscoveryConfig> createDiscovery(Loader& loader, const config::PluginRef& ref,
                                                 std::string* error);

}  // namespace sluice::plugin
