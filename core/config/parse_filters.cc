// Filter entries (listener `filters:` and `routes[].filters:`), a route's `filters_mode`, and
// the cross-checks between route entries and the listeners' chains. docs/configuration.md,
// "Filters".
#include <map>
#include <set>
#include <string>

#include "core/config/parse.h"

namespace sluice::config::internal {
namespace {

void readFailureMode(const Field& f, Context& ctx, PluginRef* out) {
  std::string v;
  if (!readString(f, ctx, &v)) return;
  if (v == "closed") {
    out->failure_mode = FailureMode::kClosed;
  } else if (v == "open") {
    out->failure_mode = FailureMode::kOpen;
  } else {
    ctx.error(f.mark, cat(f.label, ": expected 'open' or 'closed', got '", v,
                          "' (closed: a failing filter answers 500; open: the request goes on "
                          "without it)"));
    return;
  }
  out->failure_mode_given = true;
}

// The listeners whose chain holds a filter named `name`, and how many times the first such
// chain holds it at most.
struct Holders {
  std::vector<const Listener*> listeners;
  size_t max_count = 0;
  const Listener* twice = nullptr;  // a listener holding it more than once
};

Holders holdersOf(const Config& config, const std::string& name) {
  Holders h;
  for (const Listener& l : config.listeners) {
    size_t n = 0;
    for (const PluginRef& f : l.filters) n += f.name == name ? 1 : 0;
    if (n == 0) continue;
    h.listeners.push_back(&l);
    if (n > h.max_count) h.max_count = n;
    if (n > 1 && h.twice == nullptr) h.twice = &l;
  }
  return h;
}

std::string routeLabel(const Route& r, size_t i) {
  return r.name.empty() ? cat("routes[", i, "] (", r.prefix, ")") : cat("route '", r.name, "'");
}

}  // namespace

void parseFilterEntry(const Field& field, bool on_route, Context& ctx, PluginRef* out) {
  out->mark = field.mark;
  if (field.value.IsScalar()) {
    readName(field, ctx, &out->name);
    return;
  }
  if (!field.value.IsMap()) {
    ctx.error(field.mark, cat(field.label,
                              ": expected a filter plugin name or a mapping {name, path, config, "
                              "failure_mode",
                              on_route ? ", disabled}" : "}", ", got ", describe(field.value)));
    return;
  }
  // `disabled` is read on listener entries too, to say plainly why it is refused there.
  std::vector<std::string_view> allowed = {"name", "path", "config", "failure_mode", "disabled"};
  forEachField(field, "filter", allowed, ctx, [&](const Field& f) {
    if (f.key == "name") {
      readName(f, ctx, &out->name);
    } else if (f.key == "path") {
      std::string path;
      if (!readString(f, ctx, &path)) return;
      if (path.empty()) {
        ctx.error(f.mark, cat(f.label, ": empty path"));
        return;
      }
      out->path = resolvePath(ctx, path);
    } else if (f.key == "config") {
      out->config = f.value;  // the plugin validates its own subtree
    } else if (f.key == "failure_mode") {
      readFailureMode(f, ctx, out);
    } else if (on_route) {
      readBool(f, ctx, &out->disabled);
    } else {
      ctx.error(f.mark, cat(f.label,
                            ": only a route's filter entry can be disabled (routes[].filters); "
                            "remove the entry from the listener's filters instead"));
    }
  });
  requireFields(field, {"name"}, ctx);
}

void parseFiltersMode(const Field& f, Context& ctx, FiltersMode* out) {
  std::string v;
  if (!readString(f, ctx, &v)) return;
  if (v == "extend") {
    *out = FiltersMode::kExtend;
  } else if (v == "replace") {
    *out = FiltersMode::kReplace;
  } else {
    ctx.error(f.mark, cat(f.label, ": expected 'extend' or 'replace', got '", v,
                          "' (extend: the listener's filters, then the route's; replace: only "
                          "the route's)"));
  }
}

void validateRouteFilters(const Config& config, Context& ctx) {
  for (size_t i = 0; i < config.routes.size(); ++i) {
    const Route& r = config.routes[i];
    std::map<std::string, const PluginRef*> overriding;  // name → first entry overriding it
    for (size_t j = 0; j < r.filters.size(); ++j) {
      const PluginRef& e = r.filters[j];
      if (e.name.empty()) continue;  // already reported
      const std::string label = cat("routes[", i, "].filters[", j, "]");
      if (e.disabled && r.filters_mode == FiltersMode::kReplace) {
        ctx.error(e.mark, cat(label, ": '", e.name,
                              "' is disabled, but with filters_mode: replace the listener's "
                              "filters do not run on this route anyway; remove the entry"));
        continue;
      }
      if (e.disabled && e.config.IsDefined() && !e.config.IsNull()) {
        ctx.error(e.mark, cat(label, ": '", e.name,
                              "' is disabled and has a config; a disabled "
                              "entry takes no config"));
      }
      if (r.filters_mode == FiltersMode::kReplace) continue;
      Holders h = holdersOf(config, e.name);
      if (h.listeners.empty()) {
        if (e.disabled) {
          std::string names;
          for (const Listener& l : config.listeners) {
            for (const PluginRef& f : l.filters) {
              if (names.find("'" + f.name + "'") == std::string::npos) {
                names += (names.empty() ? "'" : ", '") + f.name + "'";
              }
            }
          }
          ctx.error(e.mark, cat(label, ": cannot disable '", e.name, "' on ", routeLabel(r, i),
                                ": no listener's filters contain it (",
                                names.empty() ? std::string("the listeners have no filters")
                                              : "the listeners' filters are " + names,
                                ")"));
        }
        continue;  // a filter of the route's own, appended after the listener's
      }
      if (h.twice != nullptr) {
        ctx.error(e.mark, cat(label, ": '", e.name, "' is ambiguous: listener '", h.twice->name,
                              "' runs it more than once, so this entry cannot say which one it ",
                              e.disabled ? "disables" : "overrides",
                              " (use filters_mode: replace and list the route's whole chain)"));
        continue;
      }
      auto [it, inserted] = overriding.emplace(e.name, &e);
      if (!inserted) {
        ctx.error(e.mark, cat(label, ": '", e.name,
                              "' appears twice in this route's filters and overrides the "
                              "listener's entry (first at ",
                              it->second->mark.str(), "); keep one"));
      }
    }
  }
}

}  // namespace sluice::config::internal
