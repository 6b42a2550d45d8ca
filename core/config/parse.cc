// The document's top level, limits, listeners and routes. Clusters, discovery and plugin
// references are in parse_cluster.cc.
#include "core/config/parse.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace sluice::config::internal {
namespace {

constexpr uint32_t kMaxBacklog = 65535;  // a listener's `backlog` (Linux caps it at somaxconn)

void parseWorkers(const Field& field, Context& ctx, uint32_t* out) {
  if (field.value.IsScalar() && field.value.Scalar() == "auto") {
    *out = 0;
    return;
  }
  uint64_t value = 0;
  if (!parseDecimal(field.value, &value) || value < 1 || value > 256) {
    ctx.error(field.mark, cat(field.label, ": expected 'auto' or an integer 1..256, got ",
                              describe(field.value)));
    return;
  }
  *out = static_cast<uint32_t>(value);
}

// The admin token: the file's content without surrounding whitespace; a missing, unreadable or
// empty file is an error at the `token_file` value.
void readTokenFile(const Field& field, Context& ctx, Config* config) {
  std::string path;
  if (!readString(field, ctx, &path)) return;
  if (path.empty()) {
    ctx.error(field.mark, cat(field.label, ": empty path"));
    return;
  }
  config->admin_token_file = resolvePath(ctx, path);
  std::ifstream in(config->admin_token_file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.is_open() || in.bad()) {
    ctx.error(field.mark, cat(field.label, ": cannot read '", config->admin_token_file,
                              "': ", std::strerror(errno)));
    return;
  }
  const char* kSpace = " \t\r\n\v\f";
  size_t first = text.find_first_not_of(kSpace);
  if (first == std::string::npos) {
    ctx.error(field.mark, cat(field.label, ": '", config->admin_token_file, "' is empty"));
    return;
  }
  config->admin_token = text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

void parseAdmin(const Field& field, Context& ctx, Config* config) {
  if (field.value.IsNull()) return;          // `admin:` with nothing: no admin listener
  config->admin_address = "127.0.0.1:9901";  // loopback unless told otherwise
  config->admin_mark = field.mark;
  forEachField(field, "admin", {"address", "token_file"}, ctx, [&](const Field& f) {
    if (f.key == "address") {
      config->admin_mark = f.mark;
      readAddress(f, ctx, &config->admin_address);
    } else {
      readTokenFile(f, ctx, config);
    }
  });
}

void parsePluginPaths(const Field& field, Context& ctx, Config* config) {
  forEachItem(field, ctx, [&](const Field& item) {
    std::string path;
    if (!readString(item, ctx, &path)) return;
    if (path.empty()) {
      ctx.error(item.mark, cat(item.label, ": empty path"));
      return;
    }
    config->plugin_paths.push_back(resolvePath(ctx, path));
  });
}

void parseLimits(const Field& field, Context& ctx, Limits* limits) {
  constexpr uint32_t kMax = UINT32_MAX;
  forEachField(field, "limits",
               {"max_request_line_bytes", "max_header_bytes", "max_header_count",
                "max_request_body_bytes", "request_header_timeout_ms", "idle_timeout_ms"},
               ctx, [&](const Field& f) {
                 const std::string& key = f.key;
                 if (key == "max_request_line_bytes") {
                   readUint32(f, 1, kMax, ctx, &limits->max_request_line_bytes);
                 } else if (key == "max_header_bytes") {
                   readUint32(f, 1, kMax, ctx, &limits->max_header_bytes);
                 } else if (key == "max_header_count") {
                   readUint32(f, 1, kMax, ctx, &limits->max_header_count);
                 } else if (key == "max_request_body_bytes") {
                   readUint64(f, 0, UINT64_MAX, ctx, &limits->max_request_body_bytes);
                 } else if (key == "request_header_timeout_ms") {
                   readTimeoutMs(f, ctx, &limits->request_header_timeout_ms);
                 } else {
                   readTimeoutMs(f, ctx, &limits->idle_timeout_ms);
                 }
               });
}

// "/gateway/" → "/gateway", "gateway" → "/gateway", "/" → "".
void parseContextPath(const Field& field, Context& ctx, std::string* out) {
  std::string path;
  if (!readString(field, ctx, &path)) return;
  for (char c : path) {
    if (c <= ' ' || c == '?' || c == '#' || c == 0x7f) {
      ctx.error(field.mark, cat(field.label, ": invalid character in '", path,
                                "' (no spaces, controls, '?' or '#')"));
      return;
    }
  }
  if (path.find("//") != std::string::npos) {
    ctx.error(field.mark, cat(field.label, ": empty path segment in '", path, "'"));
    return;
  }
  if (path.empty() || path.front() != '/') path.insert(0, "/");
  while (!path.empty() && path.back() == '/') path.pop_back();
  *out = std::move(path);
}

bool isToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!tchar) return false;
  }
  return true;
}

// `upgrades: [websocket, ...]`: protocol names (RFC 9110 §7.8: protocol-name ["/" version],
// both tokens), kept lowercase (they compare case-insensitively), no duplicates.
void parseUpgrades(const Field& field, Context& ctx, std::vector<std::string>* out) {
  out->clear();
  forEachItem(field, ctx, [&](const Field& item) {
    std::string name;
    if (!readString(item, ctx, &name)) return;
    for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    std::string_view view = name;
    size_t slash = view.find('/');
    bool ok = slash == std::string_view::npos
                  ? isToken(view)
                  : isToken(view.substr(0, slash)) && isToken(view.substr(slash + 1));
    if (!ok) {
      ctx.error(item.mark, cat(item.label, ": not a protocol name: '", name,
                               "' (a token such as websocket, optionally /version)"));
      return;
    }
    for (const std::string& seen : *out) {
      if (seen == name) {
        ctx.error(item.mark, cat(item.label, ": '", name, "' listed twice"));
        return;
      }
    }
    out->push_back(std::move(name));
  });
}

void parseConnectionBalance(const Field& f, Context& ctx, ConnectionBalance* out) {
  std::string v;
  if (!readString(f, ctx, &v)) return;
  if (v == "exact") {
    *out = ConnectionBalance::kExact;
  } else if (v == "kernel") {
    *out = ConnectionBalance::kKernel;
  } else {
    ctx.error(f.mark, cat(f.label, ": expected 'exact' or 'kernel', got '", v,
                          "' (exact: a busier worker hands new connections to the least loaded "
                          "one; kernel: the kernel's SO_REUSEPORT choice stands)"));
  }
}

void parseListener(const Field& field, Context& ctx, Config* config, Spans* spans) {
  if (field.value.IsNull()) ctx.error(field.mark, field.label + ": empty listener");
  Listener& listener = config->listeners.emplace_back();
  listener.mark = field.mark;
  Mark& name_mark = spans->listener_name.emplace_back(field.mark);
  Mark& address_mark = spans->listener_address.emplace_back(field.mark);
  forEachField(
      field, "listener",
      {"name", "address", "context_path", "filters", "tls", "access_log", "upgrades",
       "tunnel_idle_timeout_ms", "trusted_deadline_header", "backlog", "connection_balance"},
      ctx, [&](const Field& f) {
        if (f.key == "name") {
          name_mark = f.mark;
          readName(f, ctx, &listener.name);
        } else if (f.key == "address") {
          address_mark = f.mark;
          readAddress(f, ctx, &listener.address);
        } else if (f.key == "context_path") {
          parseContextPath(f, ctx, &listener.context_path);
        } else if (f.key == "tls") {
          parseListenerTls(f, ctx, &listener.tls);
        } else if (f.key == "access_log") {
          parseAccessLogs(f, ctx, &listener.access_logs);
        } else if (f.key == "upgrades") {
          parseUpgrades(f, ctx, &listener.upgrades);
        } else if (f.key == "tunnel_idle_timeout_ms") {
          readTimeoutMs(f, ctx, &listener.tunnel_idle_timeout_ms);
        } else if (f.key == "trusted_deadline_header") {
          readHeaderName(f, ctx, &listener.trusted_deadline_header);
        } else if (f.key == "backlog") {
          readUint32(f, 1, kMaxBacklog, ctx, &listener.backlog);
        } else if (f.key == "connection_balance") {
          parseConnectionBalance(f, ctx, &listener.connection_balance);
        } else {
          forEachItem(f, ctx, [&](const Field& item) {
            parseFilterEntry(item, false, ctx, &listener.filters.emplace_back());
          });
        }
      });
  requireFields(field, {"name", "address"}, ctx);
}

void parseRoute(const Field& field, Context& ctx, Config* config, Spans* spans) {
  if (field.value.IsNull()) ctx.error(field.mark, field.label + ": empty route");
  Route& route = config->routes.emplace_back();
  route.mark = field.mark;
  Mark& prefix_mark = spans->route_prefix.emplace_back(field.mark);
  Mark& cluster_mark = spans->route_cluster.emplace_back(field.mark);
  Mark& name_mark = spans->route_name.emplace_back(field.mark);
  forEachField(
      field, "route",
      {"name", "prefix", "cluster", "prefix_rewrite", "timeout_ms", "retry_on", "filters",
       "filters_mode"},
      ctx, [&](const Field& f) {
        if (f.key == "name") {
          name_mark = f.mark;
          readName(f, ctx, &route.name);
        } else if (f.key == "filters") {
          forEachItem(f, ctx, [&](const Field& item) {
            parseFilterEntry(item, true, ctx, &route.filters.emplace_back());
          });
        } else if (f.key == "filters_mode") {
          parseFiltersMode(f, ctx, &route.filters_mode);
        } else if (f.key == "prefix") {
          prefix_mark = f.mark;
          if (readString(f, ctx, &route.prefix) && route.prefix.rfind('/', 0) != 0) {
            ctx.error(f.mark, cat(f.label, ": must start with '/', got '", route.prefix, "'"));
          }
        } else if (f.key == "cluster") {
          cluster_mark = f.mark;
          readName(f, ctx, &route.cluster);
        } else if (f.key == "timeout_ms") {
          uint32_t ms = 0;
          if (readUint32(f, 0, UINT32_MAX, ctx, &ms)) route.timeout_ms = ms;
        } else if (f.key == "retry_on") {
          uint32_t bits = 0;
          parseRetryOn(f, ctx, &bits);
          route.retry_on = bits;
        } else {
          std::string rewrite;
          if (!readString(f, ctx, &rewrite)) return;
          if (!rewrite.empty() && rewrite.front() != '/') {
            ctx.error(f.mark,
                      cat(f.label, ": must be empty or start with '/', got '", rewrite, "'"));
          }
          route.prefix_rewrite = std::move(rewrite);
        }
      });
  requireFields(field, {"prefix", "cluster"}, ctx);
}

}  // namespace

bool readHeaderName(const Field& f, Context& ctx, std::string* out) {
  std::string v;
  if (!readString(f, ctx, &v)) return false;
  for (char c : v) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) {
      ctx.error(f.mark,
                cat(f.label, ": '", v, "' is not a header name (letters, digits, '-', '_')"));
      return false;
    }
  }
  *out = std::move(v);
  return true;
}

void parseDocument(const YAML::Node& root, Context& ctx, Config* config, Spans* spans) {
  Field doc{"", "", root, ctx.markOf(root)};
  if (doc.mark.line == 0) doc.mark = Mark{ctx.file(), 1, 1};
  spans->listeners = doc.mark;
  forEachField(
      doc, "top-level config",
      {"workers", "admin", "plugin_paths", "limits", "drain_timeout_ms", "watch_config",
       "listeners", "routes", "clusters", "discovery"},
      ctx, [&](const Field& f) {
        if (f.key == "workers") {
          parseWorkers(f, ctx, &config->workers);
        } else if (f.key == "admin") {
          parseAdmin(f, ctx, config);
        } else if (f.key == "plugin_paths") {
          parsePluginPaths(f, ctx, config);
        } else if (f.key == "limits") {
          parseLimits(f, ctx, &config->limits);
        } else if (f.key == "drain_timeout_ms") {
          readTimeoutMs(f, ctx, &config->drain_timeout_ms);
        } else if (f.key == "watch_config") {
          readBool(f, ctx, &config->watch_config);
        } else if (f.key == "listeners") {
          spans->listeners = f.mark;
          forEachItem(f, ctx, [&](const Field& item) { parseListener(item, ctx, config, spans); });
        } else if (f.key == "routes") {
          forEachItem(f, ctx, [&](const Field& item) { parseRoute(item, ctx, config, spans); });
        } else if (f.key == "clusters") {
          forEachItem(f, ctx, [&](const Field& item) {
            parseCluster(item, ctx, &config->clusters.emplace_back(),
                         &spans->cluster_name.emplace_back(item.mark));
          });
        } else {
          forEachItem(f, ctx, [&](const Field& item) {
            parseDiscovery(item, ctx, &config->discovery.emplace_back());
          });
        }
      });
}

}  // namespace sluice::config::internal
