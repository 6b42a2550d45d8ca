// Configuration reload: parse → validate → build off the workers → post to every worker →
// workers swap. A failure at any step changes nothing. Main thread.
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/common/log.h"
#include "core/event/main_thread.h"
#include "core/server/file_watch.h"
#include "core/server/server.h"

namespace sluice::server {
namespace {

constexpr uint32_t kWatchQuietMs = 200;
constexpr uint32_t kWatchMaxWaitMs = 1000;

uint64_t nowUs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

std::string filterNames(const proxy::ListenerInfo& l) {
  std::string s = "[";
  for (size_t i = 0; i < l.config.filters.size(); ++i) {
    s += (i == 0 ? "" : ", ") + l.config.filters[i].name;
  }
  return s + "]";
}

// Every file the running filters depend on (listener and route chains), with its digest.
std::map<std::string, std::string> dependencies(const Built& built) {
  std::map<std::string, std::string> files;
  auto add = [&](const proxy::ListenerInfo& l) {
    for (const auto& f : l.filters) {
      if (f == nullptr) continue;
      for (const plugin::FileDependency& d : f->files()) files[d.path] = d.sha256;
    }
  };
  for (const auto& l : built.listeners) add(*l);
  for (const auto& c : built.route_chains) add(*c.info);
  return files;
}

// Every filter entry's YAML (to tell a file-only rebuild from a settings change).
std::string pluginKeys(const proxy::ListenerInfo& l) {
  std::string s;
  for (const auto& f : l.config.filters) s += pluginKey(f) + ";";
  return s;
}

// A route's filter entries for the reload log: "extend [a, -b, c]" (-: disabled).
std::string routeFilters(const config::Route& r) {
  std::string s = r.filters_mode == config::FiltersMode::kReplace ? "replace [" : "extend [";
  for (size_t i = 0; i < r.filters.size(); ++i) {
    s += (i == 0 ? "" : ", ") + std::string(r.filters[i].disabled ? "-" : "") + r.filters[i].name;
  }
  return s + "]";
}

// Whether two routes' filter entries differ in anything (names, configs, paths, modes).
bool routeFiltersDiffer(const config::Route& a, const config::Route& b) {
  if (a.filters_mode != b.filters_mode || a.filters.size() != b.filters.size()) return true;
  for (size_t i = 0; i < a.filters.size(); ++i) {
    const auto& x = a.filters[i];
    const auto& y = b.filters[i];
    if (pluginKey(x) != pluginKey(y) || x.disabled != y.disabled ||
        x.failure_mode != y.failure_mode || x.failure_mode_given != y.failure_mode_given) {
      return true;
    }
  }
  return false;
}

// What differs between two builds, one line per change.
std::vector<std::string> diff(const Built& old, const Built& next) {
  std::vector<std::string> out;
  std::map<std::string, size_t> old_listeners;
  for (size_t i = 0; i < old.listeners.size(); ++i)
    old_listeners[old.listeners[i]->config.name] = i;
  std::set<std::string> seen;
  for (size_t i = 0; i < next.listeners.size(); ++i) {
    const auto& l = *next.listeners[i];
    seen.insert(l.config.name);
    auto it = old_listeners.find(l.config.name);
    if (it == old_listeners.end()) {
      out.push_back("listener '" + l.config.name + "' added on " + l.config.address);
      continue;
    }
    const auto& o = *old.listeners[it->second];
    if (o.config.address != l.config.address) {
      out.push_back("listener '" + l.config.name + "': address " + o.config.address + " → " +
                    l.config.address);
    }
    if (o.config.context_path != l.config.context_path) {
      out.push_back("listener '" + l.config.name + "': context_path '" + o.config.context_path +
                    "' → '" + l.config.context_path + "'");
    }
    bool files_only = false;
    for (const std::string& c : next.file_changes) {
      files_only = files_only || c.rfind("listener '" + l.config.name + "': ", 0) == 0;
    }
    if (files_only && pluginKeys(o) != pluginKeys(l)) files_only = false;
    if (files_only) {
      // Named below, filter by filter, with the file that changed.
    } else if (old.listeners[it->second] != next.listeners[i] && filterNames(o) == filterNames(l) &&
               o.config.address == l.config.address &&
               o.config.context_path == l.config.context_path) {
      out.push_back("listener '" + l.config.name +
                    "': filter settings, limits, TLS, access logs or plugin files changed");
    } else if (filterNames(o) != filterNames(l)) {
      out.push_back("listener '" + l.config.name + "': filters " + filterNames(o) + " → " +
                    filterNames(l));
    }
  }
  for (const auto& [name, i] : old_listeners) {
    if (seen.count(name) == 0) out.push_back("listener '" + name + "' removed");
  }
  std::map<std::string, const BuiltCluster*> old_clusters;
  for (const auto& c : old.clusters) old_clusters[c.info->config.name] = &c;
  std::set<std::string> seen_clusters;
  for (const auto& c : next.clusters) {
    const std::string& name = c.info->config.name;
    seen_clusters.insert(name);
    auto it = old_clusters.find(name);
    if (it == old_clusters.end()) {
      out.push_back("cluster '" + name + "' added (" + c.info->config.balancer.name + ")");
      continue;
    }
    const BuiltCluster& o = *it->second;
    if (o.info->config.balancer.name != c.info->config.balancer.name) {
      out.push_back("cluster '" + name + "': balancer " + o.info->config.balancer.name + " → " +
                    c.info->config.balancer.name);
    } else if (o.info != c.info) {
      bool files_only = false;  // then named with the file below
      for (const std::string& f : next.file_changes) {
        files_only = files_only || f.rfind("cluster '" + name + "': ", 0) == 0;
      }
      if (!files_only) out.push_back("cluster '" + name + "': settings or balancer config changed");
    }
    std::set<std::string> a, b;
    for (const auto& e : o.endpoints) a.insert(e.address);
    for (const auto& e : c.endpoints) b.insert(e.address);
    if (a != b) out.push_back("cluster '" + name + "': endpoints changed");
  }
  for (const auto& [name, c] : old_clusters) {
    if (seen_clusters.count(name) == 0) out.push_back("cluster '" + name + "' removed");
  }
  if (old.config->routes.size() != next.config->routes.size()) {
    out.push_back("routes: " + std::to_string(old.config->routes.size()) + " → " +
                  std::to_string(next.config->routes.size()));
  } else {
    for (size_t i = 0; i < next.config->routes.size(); ++i) {
      const auto& a = old.config->routes[i];
      const auto& b = next.config->routes[i];
      if (a.prefix != b.prefix || a.cluster != b.cluster || a.prefix_rewrite != b.prefix_rewrite) {
        out.push_back("route " + std::to_string(i) + " changed (" + b.prefix + " → " + b.cluster +
                      ")");
      }
      if (routeFiltersDiffer(a, b)) {
        std::string was = routeFilters(a), now = routeFilters(b);
        out.push_back("route " + std::to_string(i) + " (" + (b.name.empty() ? b.prefix : b.name) +
                      "): filters " +
                      (was == now ? now + " (settings changed)" : was + " → " + now));
      }
    }
  }
  for (size_t i = 0; i < std::max(old.discovery.size(), next.discovery.size()); ++i) {
    if (i >= next.discovery.size()) {
      out.push_back("discovery #" + std::to_string(i) + " removed");
    } else if (i >= old.discovery.size()) {
      out.push_back("discovery #" + std::to_string(i) + " (" + next.discovery[i].plugin->name() +
                    ") added");
    } else if (old.discovery[i].plugin != next.discovery[i].plugin) {
      out.push_back("discovery #" + std::to_string(i) + " (" + next.discovery[i].plugin->name() +
                    ") restarted with its new config");
    }
  }
  // Chains rebuilt because a file a filter depends on changed (its YAML did not).
  for (const std::string& c : next.file_changes) out.push_back(c);
  return out;
}

}  // namespace

ReloadResult Server::reload(const std::string& trigger, bool dry_run) {
  const uint64_t started = nowUs();
  ReloadResult result;
  result.dry_run = dry_run;
  result.version = version_;
  std::shared_ptr<const config::Config> cfg =
      source_.path.empty()
          ? config::loadString(source_.embedded, "<embedded demo config>", &result.errors)
          : config::loadFile(source_.path, &result.errors);
  Built next;
  if (cfg != nullptr) {
    std::vector<std::string> saved_paths = loader_->searchPaths();
    loader_->setSearchPaths(cfg->plugin_paths);
    bool built = build(cfg, *loader_, &built_, &next, &result.errors);
    if (!built || dry_run) loader_->setSearchPaths(saved_paths);
    if (built) {
      result.changes = diff(built_, next);
      const config::Config& now = *built_.config;
      if (cfg->workers != now.workers) {
        result.changes.push_back("workers: change needs a restart (still " +
                                 std::to_string(workers_.size()) + ")");
      }
      if (cfg->admin_address != now.admin_address) {
        result.changes.push_back("admin.address: change needs a restart (still " +
                                 now.admin_address + ")");
      }
    }
  }
  // New sockets for new listeners and moved addresses. A listener renamed on the same address
  // keeps its sockets (no queued connection is lost). A new address must be free of other
  // processes (listen.h); one that a listener going away holds is joined.
  std::map<std::string, std::vector<int>> fds;
  std::map<std::string, std::string> keep;
  if (dry_run) {
    // Whether the new addresses could be taken, without keeping a socket.
    if (result.errors.empty()) {
      keep = keptSockets(next);
      OwnAddresses own = ownAddresses(keep);
      for (const auto& l : next.listeners) {
        if (keep.count(l->config.name) != 0) continue;
        std::string error;
        if (!checkBindable(l->config.address, own, &error)) {
          result.errors.push_back(l->config.mark.str() + ": listener '" + l->config.name +
                                  "': " + error);
        }
        own.all.push_back(l->config.address);
      }
    }
    // A dry run changes nothing, its failures included: no counters, no last_reload.
    result.ok = result.errors.empty();
    return result;
  }
  if (draining_) result.errors.push_back("draining: reloads are refused once a drain began");
  if (result.errors.empty()) {
    keep = keptSockets(next);
    OwnAddresses own = ownAddresses(keep);
    for (const auto& l : next.listeners) {
      if (keep.count(l->config.name) != 0) continue;
      std::string error;
      if (!openListener(l->config, own, &fds[l->config.name], &error)) {
        result.errors.push_back(error);
        closeFds(&fds);
        break;
      }
      own.all.push_back(l->config.address);
    }
  }
  if (!result.errors.empty()) {
    ++reloads_failed_;
    SLUICE_LOG(kError, "reload (", trigger, ") refused; still serving config version ", version_,
               ":");
    for (const std::string& e : result.errors) SLUICE_LOG(kError, "  ", e);
    last_reload_ = result;
    last_reload_at_ = static_cast<uint64_t>(time(nullptr));
    return result;
  }
  result.ok = true;

  // Discovery entries that changed stop now; the new ones start once the clusters are in place.
  std::vector<bool> restart(next.discovery.size(), true);
  for (size_t i = 0; i < built_.discovery.size(); ++i) {
    bool same = i < next.discovery.size() && next.discovery[i].plugin == built_.discovery[i].plugin;
    if (same) {
      restart[i] = false;
    } else {
      stopDiscovery(i);
    }
  }
  std::vector<ClusterTemplate> templates;
  for (const auto& d : next.discovery) templates.push_back(d.cluster_template);
  std::vector<std::string> warnings;
  clusters_->reconcile(next.clusters, templates, &warnings);
  for (const std::string& w : warnings) SLUICE_LOG(kWarn, "reload: ", w);

  Built old = std::move(built_);
  built_ = std::move(next);
  listener_address_.clear();
  for (const auto& l : built_.listeners) listener_address_[l->config.name] = l->config.address;
  ++version_;
  result.version = version_;
  applyToWorkers(fds, keep, started);
  sinks_.resize(built_.discovery.size());
  for (size_t i = 0; i < built_.discovery.size(); ++i) {
    if (restart[i] || sinks_[i] == nullptr) {
      sinks_[i].reset();
      startDiscovery(i);
    }
  }
  ++reloads_ok_;
  last_reload_ = result;
  last_reload_at_ = static_cast<uint64_t>(time(nullptr));
  SLUICE_LOG(kInfo, "reload (", trigger, "): config version ", version_, ", ",
             result.changes.empty() ? std::string("no changes")
                                    : std::to_string(result.changes.size()) + " changes");
  for (const std::string& c : result.changes) SLUICE_LOG(kInfo, "  ", c);
  updateWatch();
  updateCertWatch();
  // `old` goes here; what workers still use lives on until their last request ends.
  return result;
}

OwnAddresses Server::ownAddresses(const std::map<std::string, std::string>& keep) const {
  std::set<std::string> kept_slots;
  for (const auto& [name, slot] : keep) kept_slots.insert(slot);
  OwnAddresses own;
  for (const auto& [name, address] : listener_address_) {
    own.all.push_back(address);
    if (kept_slots.count(name) == 0) own.joinable.push_back(address);
  }
  return own;
}

std::map<std::string, std::string> Server::keptSockets(const Built& next) const {
  std::map<std::string, std::string> keep;  // new name → name of the slot whose socket stays
  std::set<std::string> next_names;
  for (const auto& l : next.listeners) next_names.insert(l->config.name);
  std::set<std::string> taken;
  for (const auto& l : next.listeners) {
    auto same = listener_address_.find(l->config.name);
    if (same != listener_address_.end() && same->second == l->config.address) {
      keep[l->config.name] = l->config.name;
      taken.insert(l->config.name);
    }
  }
  for (const auto& l : next.listeners) {
    if (keep.count(l->config.name) != 0) continue;
    for (const auto& [old_name, address] : listener_address_) {
      if (address == l->config.address && next_names.count(old_name) == 0 &&
          taken.count(old_name) == 0) {
        keep[l->config.name] = old_name;  // renamed in place
        taken.insert(old_name);
        break;
      }
    }
  }
  return keep;
}

void Server::applyToWorkers(const std::map<std::string, std::vector<int>>& new_fds,
                            const std::map<std::string, std::string>& keep, uint64_t started_us) {
  auto routes = built_.routes;
  auto acked = std::make_shared<size_t>(0);
  const size_t n = workers_.size();
  const uint64_t version = version_;
  for (size_t w = 0; w < n; ++w) {
    std::vector<proxy::ListenerUpdate> updates;
    for (const auto& l : built_.listeners) {
      proxy::ListenerUpdate u;
      u.info = l;
      auto it = new_fds.find(l->config.name);
      if (it != new_fds.end() && w < it->second.size()) u.fd = it->second[w];
      auto k = keep.find(l->config.name);
      if (k != keep.end()) u.keep = k->second;
      updates.push_back(std::move(u));
    }
    workers_[w]->post(
        [this, w, routes, updates = std::move(updates), acked, n, started_us, version] {
          proxy::WorkerRuntime& rt = *runtimes_[w];
          rt.setRoutes(routes);
          rt.applyListeners(updates);
          if (started_us == 0) return;
          event::postToMain([this, acked, n, started_us, version] {
            if (++*acked != n) return;
            uint64_t us = nowUs() - started_us;
            apply_us_.push_back(us);
            if (apply_us_.size() > 1000) apply_us_.pop_front();
            SLUICE_LOG(kInfo, "config version ", version, " running on all ", n, " workers (",
                       us / 1000, ".", (us % 1000) / 100, " ms after the reload began)");
          });
        });
  }
}

void Server::updateWatch() {
  bool want = built_.config->watch_config && !source_.path.empty() && !draining_;
  if (!want) {
    watch_.reset();
    return;
  }
  // The config file and every file a filter depends on (depends_on_file: keys files, htpasswd
  // files, JWKS).
  std::vector<std::string> files{source_.path};
  for (const auto& [path, digest] : dependencies(built_)) files.push_back(path);
  if (watch_ != nullptr && watch_->files() == files) return;
  // Applied 200 ms after the file went quiet, and at most 1 s after its first change even while
  // it keeps changing (docs/operations.md).
  watch_ = std::make_unique<FileWatch>(
      base_, "watch_config", files, kWatchQuietMs, kWatchMaxWaitMs, [this] {
        std::ifstream in(source_.path, std::ios::binary);
        std::stringstream text;
        if (in) text << in.rdbuf();
        bool same = in && text.str() == built_.config->text;
        for (const auto& [path, digest] : dependencies(built_)) {
          std::string now, error;
          same = same && plugin::fileSha256(path, &now, &error) && now == digest;
        }
        if (same) return;  // touched, not changed
        reload("file watch", false);
      });
}

}  // namespace sluice::server
