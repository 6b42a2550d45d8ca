#include "core/server/route_chains.h"

#include <yaml-cpp/yaml.h>

#include "core/event/main_thread.h"

namespace sluice::server {
namespace {

// A route's identity across reloads: its name, else its prefix (unique among routes).
std::string routeIdentity(const config::Route& r) {
  return r.name.empty() ? "prefix:" + r.prefix : "name:" + r.name;
}

// One entry of a composed chain.
struct Entry {
  config::PluginRef ref;
  std::shared_ptr<plugin::FilterConfig> filter;
  bool own = false;  // the route's entry (its own config instance), not the listener's
};

// The route entries' config instances, one per distinct effective reference.
class RouteConfigs {
 public:
  RouteConfigs(plugin::Loader& loader, std::vector<std::string>* errors)
      : loader_(loader), errors_(errors) {}
  std::shared_ptr<plugin::FilterConfig> get(const config::PluginRef& ref) {
    std::string key = pluginKey(ref);
    auto it = made_.find(key);
    if (it != made_.end()) return it->second;
    std::string error;
    auto f = plugin::createFilter(loader_, ref, &error);
    if (f == nullptr) errors_->push_back(error);
    made_.emplace(key, f);  // a failure is reported once
    return f;
  }

 private:
  plugin::Loader& loader_;
  std::vector<std::string>* errors_;
  std::map<std::string, std::shared_ptr<plugin::FilterConfig>> made_;
};

// The chain `route` runs on `listener`; false when it is the listener's own chain unchanged.
// *ok turns false when an entry has no config instance (already reported).
bool compose(const config::Route& route, const proxy::ListenerInfo& listener, RouteConfigs& made,
             std::vector<Entry>* out, bool* ok) {
  bool changed = route.filters_mode == config::FiltersMode::kReplace;
  if (!changed) {
    for (size_t i = 0; i < listener.filters.size(); ++i) {
      out->push_back(Entry{listener.config.filters[i], listener.filters[i], false});
    }
  }
  std::vector<bool> removed(out->size(), false);
  for (const config::PluginRef& e : route.filters) {
    size_t at = out->size();
    if (route.filters_mode == config::FiltersMode::kExtend) {
      for (size_t i = 0; i < removed.size(); ++i) {
        if ((*out)[i].ref.name == e.name && !(*out)[i].own) at = i;
      }
    }
    if (e.disabled) {
      // Validation made sure some listener has it; on listeners without it this is a no-op.
      if (at < removed.size()) {
        removed[at] = true;
        changed = true;
      }
      continue;
    }
    config::PluginRef ref = e;
    if (at < removed.size()) {
      const config::PluginRef& base = (*out)[at].ref;
      if (ref.path.empty()) ref.path = base.path;
      if (!ref.failure_mode_given) ref.failure_mode = base.failure_mode;
    }
    auto filter = made.get(ref);
    if (filter == nullptr) *ok = false;
    Entry entry{std::move(ref), std::move(filter), true};
    if (at < removed.size()) {
      (*out)[at] = std::move(entry);
    } else {
      out->push_back(std::move(entry));
    }
    changed = true;
  }
  std::vector<Entry> kept;
  for (size_t i = 0; i < out->size(); ++i) {
    if (i >= removed.size() || !removed[i]) kept.push_back(std::move((*out)[i]));
  }
  *out = std::move(kept);
  return changed;
}

}  // namespace

std::string pluginKey(const config::PluginRef& ref) {
  YAML::Emitter out;
  out << YAML::Flow << ref.config;
  return ref.name + "|" + ref.path + "|" + out.c_str();
}

std::vector<BuiltRouteChain> buildRouteChains(
    const config::Config& config, plugin::Loader& loader,
    const std::vector<std::shared_ptr<const proxy::ListenerInfo>>& listeners,
    const std::vector<std::string>& listener_keys, const std::vector<BuiltRouteChain>& previous,
    proxy::RouteTable* routes, std::vector<std::string>* errors,
    std::vector<std::string>* file_changes) {
  std::vector<BuiltRouteChain> built;
  for (size_t r = 0; r < config.routes.size(); ++r) {
    const config::Route& route = config.routes[r];
    if (route.filters.empty() && route.filters_mode == config::FiltersMode::kExtend) continue;
    RouteConfigs made(loader, errors);
    for (size_t l = 0; l < listeners.size() && l < listener_keys.size(); ++l) {
      const proxy::ListenerInfo& base = *listeners[l];
      std::vector<Entry> entries;
      bool ok = true;
      if (!compose(route, base, made, &entries, &ok) || !ok) continue;
      std::string key = routeIdentity(route) + "#" + listener_keys[l];
      for (const Entry& e : entries) {
        key += "#" + pluginKey(e.ref) + (e.own ? "|own|" : "|listener|") +
               std::to_string(static_cast<int>(e.ref.failure_mode));
      }
      std::shared_ptr<const proxy::ListenerInfo> info;
      for (const BuiltRouteChain& old : previous) {
        if (old.key != key || old.base != &base || old.info->filters.size() != entries.size()) {
          continue;
        }
        bool same = true;
        for (size_t i = 0; i < entries.size(); ++i) {
          same = same && &old.info->filters[i]->library() == &entries[i].filter->library();
        }
        // The route's own entries: rebuilt when a file they read changed (the listener's
        // entries are the base's, compared with it).
        std::vector<std::string> changed;
        for (size_t i = 0; same && i < entries.size(); ++i) {
          if (!entries[i].own) continue;
          std::string why =
              plugin::changedFile(old.info->filters[i]->files(), entries[i].filter->files());
          if (!why.empty()) {
            changed.push_back("route '" + (route.name.empty() ? route.prefix : route.name) +
                              "' on listener '" + base.config.name + "': filter '" +
                              entries[i].filter->name() + "' rebuilt: " + why);
          }
        }
        if (same && changed.empty()) {
          info = old.info;
        } else if (same && file_changes != nullptr) {
          for (std::string& c : changed) file_changes->push_back(std::move(c));
        }
      }
      if (info == nullptr) {
        auto fresh = std::make_unique<proxy::ListenerInfo>(base);
        fresh->route = route.name.empty() ? route.prefix : route.name;
        fresh->config.filters.clear();
        fresh->filters.clear();
        for (Entry& e : entries) {
          fresh->config.filters.push_back(std::move(e.ref));
          fresh->filters.push_back(std::move(e.filter));
        }
        info = event::mainThreadOwned(std::move(fresh));
      }
      auto& per_route = routes->chains[base.config.name];
      per_route.resize(config.routes.size());
      per_route[r] = info;
      built.push_back(BuiltRouteChain{std::move(key), &base, std::move(info)});
    }
  }
  return built;
}

}  // namespace sluice::server
