// createFilter / createBalancer / createDiscovery: load the plugin, run its config_create.
#include <memory>
#include <string>

#include "core/plugin/config_node.h"
#include "core/plugin/internal.h"
#include "core/plugin/plugin.h"

namespace sluice::plugin {
namespace {

template <typename Hooks>
std::shared_ptr<Instance<Hooks>> create(Loader& loader, const config::PluginRef& ref,
                                        sluice_plugin_kind kind,
                                        const Hooks* (Library::*table)() const,
                                        std::string* error) {
  std::shared_ptr<Library> library = loader.load(ref, kind, error);
  if (library == nullptr) return nullptr;
  const Hooks* hooks = ((*library).*table)();
  ConfigTree tree(ref.config, configBaseDir(ref.mark.file));
  char message[1024] = "";
  sluice_error err{message, sizeof(message), 0, 0};
  PluginMetrics metrics;
  library->setDeclaring(&metrics);
  void* config = hooks->config_create(library->hostApi(), tree.root(), &err);
  library->setDeclaring(nullptr);
  if (config == nullptr) {
    message[sizeof(message) - 1] = '\0';
    // Point at the node the plugin named, else at its config block, else at the plugin entry.
    config::Mark mark = ref.mark;
    const sluice_config_api* api = configApi();
    if (err.line != 0) {
      mark.line = err.line;
      mark.column = err.column;
    } else if (api->line(tree.root()) != 0) {
      mark.line = api->line(tree.root());
      mark.column = api->column(tree.root());
    }
    *error = internal::where(mark) + ": plugin '" + ref.name + "' (" + library->path() +
             "): " + (message[0] != '\0' ? message : "refused its config (no reason given)");
    return nullptr;
  }
  return std::make_shared<Instance<Hooks>>(std::move(library), hooks, config, ref.name,
                                           std::move(metrics), tree.takeFiles());
}

}  // namespace

std::string changedFile(const std::vector<FileDependency>& old,
                        const std::vector<FileDependency>& next) {
  for (const FileDependency& n : next) {
    bool same = false;
    for (const FileDependency& o : old) same = same || o == n;
    if (!same) return n.path + " changed";
  }
  for (const FileDependency& o : old) {
    bool kept = false;
    for (const FileDependency& n : next) kept = kept || n.path == o.path;
    if (!kept) return o.path + " no longer used";
  }
  return std::string();
}

std::shared_ptr<FilterConfig> createFilter(Loader& loader, const config::PluginRef& ref,
                                           std::string* error) {
  return create(loader, ref, SLUICE_PLUGIN_KIND_FILTER, &Library::filter, error);
}

std::shared_ptr<BalancerConfig> createBalancer(Loader& loader, const config::PluginRef& ref,
                                               std::string* error) {
  return create(loader, ref, SLUICE_PLUGIN_KIND_BALANCER, &Library::balancer, error);
}

std::shared_ptr<DiscoveryConfig> createDiscovery(Loader& loader, const config::PluginRef& ref,
                                                 std::string* error) {
  return create(loader, ref, SLUICE_PLUGIN_KIND_DISCOVERY, &Library::discovery, error);
}

}  // namespace sluice::plugin
