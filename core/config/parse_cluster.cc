// Clusters (endpoints, hash key, timeouts), discovery entries and plugin references.
#include <set>

#include "core/config/parse.h"

namespace sluice::config::internal {
namespace {

// Every key of a cluster except `name` and `endpoints`: what `cluster_defaults` may hold.
const std::vector<std::string_view>& settingKeys() {
  static const std::vector<std::string_view> keys = {"balancer",
                                                     "hash_key",
                                                     "connect_timeout_ms",
                                                     "response_timeout_ms",
                                                     "idle_timeout_ms",
                                                     "max_idle_connections",
                                                     "retries",
                                                     "max_requests_per_host",
                                                     "max_queue",
                                                     "queue_timeout_ms",
                                                     "tls",
                                                     "retry_policy",
                                                     "circuit_breakers",
                                                     "request_timeout_ms",
                                                     "max_response_header_bytes",
                                                     "max_response_header_count",
                                                     "deadline_header"};
  static const std::vector<std::string_view> all = [] {
    std::vector<std::string_view> v = keys;
    v.insert(v.end(), healthSettingKeys().begin(), healthSettingKeys().end());
    return v;
  }();
  return all;
}

void parseEndpoint(const Field& field, Context& ctx, Endpoint* out) {
  out->mark = field.mark;
  if (field.value.IsScalar()) {
    readAddress(field, ctx, &out->address);
    return;
  }
  if (!field.value.IsMap()) {
    ctx.error(field.mark, cat(field.label,
                              ": expected \"host:port\" or a mapping "
                              "{address, weight}, got ",
                              describe(field.value)));
    return;
  }
  forEachField(field, "endpoint", {"address", "weight"}, ctx, [&](const Field& f) {
    if (f.key == "address") {
      readAddress(f, ctx, &out->address);
    } else {
      readUint32(f, 1, 10000, ctx, &out->weight);
    }
  });
  requireFields(field, {"address"}, ctx);
}

void parseEndpoints(const Field& field, Context& ctx, Cluster* out) {
  std::set<std::string> seen;
  forEachItem(field, ctx, [&](const Field& item) {
    Endpoint& endpoint = out->endpoints.emplace_back();
    parseEndpoint(item, ctx, &endpoint);
    if (!endpoint.address.empty() && !seen.insert(endpoint.address).second) {
      ctx.error(item.mark,
                cat(item.label, ": duplicate endpoint '", endpoint.address, "' in cluster"));
    }
  });
}

void parseHashKey(const Field& field, Context& ctx, HashKey* out) {
  using Source = HashKey::Source;
  std::string first;
  forEachField(field, "hash_key", {"header", "cookie", "query", "client_ip", "path"}, ctx,
               [&](const Field& f) {
                 if (!first.empty()) {
                   ctx.error(f.mark, cat(field.label, ": takes exactly one source, got '", first,
                                         "' and '", f.key, "'"));
                   return;
                 }
                 first = f.key;
                 if (f.key == "client_ip" || f.key == "path") {
                   bool on = false;
                   if (!readBool(f, ctx, &on)) return;
                   if (!on) {
                     ctx.error(f.mark, cat(f.label, ": must be true (leave out ", field.label,
                                           " to hash on nothing)"));
                     return;
                   }
                   out->source = f.key == "path" ? Source::kPath : Source::kClientIp;
                   return;
                 }
                 if (!readString(f, ctx, &out->name)) return;
                 if (out->name.empty()) {
                   ctx.error(f.mark, cat(f.label, ": empty name"));
                   return;
                 }
                 out->source = f.key == "header"   ? Source::kHeader
                               : f.key == "cookie" ? Source::kCookie
                                                   : Source::kQuery;
               });
  if (field.value.IsNull() || (field.value.IsMap() && field.value.size() == 0)) {
    ctx.error(field.mark,
              cat(field.label, ": expected one of header, cookie, query, client_ip, path"));
  }
}

// Reads one of settingKeys() into *out.
// What parseSetting saw of a cluster's keys, for the checks across keys.
struct SeenSettings {
  bool balancer = false;
  bool retries = false;  // the top-level `retries`
  Mark retries_mark;
  bool policy_retries = false;  // `retry_policy.retries`
};

// After the last setting: the old `retries` and `retry_policy.retries` say the same thing, so
// both at once is refused rather than one silently winning.
void checkSettings(const SeenSettings& seen, const std::string& label, Context& ctx) {
  if (seen.retries && seen.policy_retries) {
    ctx.error(seen.retries_mark,
              label + ".retries: also given as retry_policy.retries; keep one (retry_policy)");
  }
}

void parseSetting(const Field& f, Context& ctx, Cluster* out, SeenSettings* seen) {
  if (f.key == "balancer") {
    seen->balancer = true;
    parsePluginRef(f, "balancer", ctx, &out->balancer);
  } else if (f.key == "hash_key") {
    parseHashKey(f, ctx, &out->hash_key);
  } else if (f.key == "connect_timeout_ms") {
    readTimeoutMs(f, ctx, &out->connect_timeout_ms);
  } else if (f.key == "response_timeout_ms") {
    readTimeoutMs(f, ctx, &out->response_timeout_ms);
  } else if (f.key == "idle_timeout_ms") {
    readTimeoutMs(f, ctx, &out->idle_timeout_ms);
  } else if (f.key == "max_idle_connections") {
    readUint32(f, 0, 100000, ctx, &out->max_idle_connections);
  } else if (f.key == "retries") {
    seen->retries = true;
    seen->retries_mark = f.mark;
    readUint32(f, 0, 10, ctx, &out->retry_policy.retries);
  } else if (f.key == "tls") {
    parseClusterTls(f, ctx, &out->tls);
  } else if (isResilienceKey(f.key)) {
    if (f.key == "retry_policy" && f.value.IsMap() && f.value["retries"]) {
      seen->policy_retries = true;
    }
    parseResilienceSetting(f, ctx, out);
  } else {
    if (!parseHealthSetting(f, ctx, out)) parseQueueSetting(f, ctx, out);  // parse_health/queue
  }
}

void setDefaultBalancer(Cluster* cluster) {
  cluster->balancer.name = "round_robin";
  cluster->balancer.mark = cluster->mark;
}

}  // namespace

void parsePluginRef(const Field& field, std::string_view what, Context& ctx, PluginRef* out,
                    std::string_view extra_key, const std::function<void(const Field&)>& on_extra) {
  out->mark = field.mark;
  if (field.value.IsScalar()) {
    readName(field, ctx, &out->name);
    return;
  }
  if (!field.value.IsMap()) {
    ctx.error(field.mark,
              cat(field.label, ": expected a ", what,
                  " plugin name or a mapping {name, path, config}, got ", describe(field.value)));
    return;
  }
  std::vector<std::string_view> allowed = {"name", "path", "config"};
  if (!extra_key.empty()) allowed.push_back(extra_key);
  forEachField(field, what, allowed, ctx, [&](const Field& f) {
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
    } else {
      on_extra(f);
    }
  });
  requireFields(field, {"name"}, ctx);
}

void parseCluster(const Field& field, Context& ctx, Cluster* out, Mark* name_mark) {
  out->mark = field.mark;
  *name_mark = field.mark;
  if (field.value.IsNull()) ctx.error(field.mark, field.label + ": empty cluster");
  std::vector<std::string_view> allowed = {"name", "endpoints"};
  allowed.insert(allowed.end(), settingKeys().begin(), settingKeys().end());
  SeenSettings seen;
  forEachField(field, "cluster", allowed, ctx, [&](const Field& f) {
    if (f.key == "name") {
      *name_mark = f.mark;
      readName(f, ctx, &out->name);
    } else if (f.key == "endpoints") {
      parseEndpoints(f, ctx, out);
    } else {
      parseSetting(f, ctx, out, &seen);
    }
  });
  requireFields(field, {"name"}, ctx);
  checkSettings(seen, field.label, ctx);
  if (!seen.balancer) setDefaultBalancer(out);
}

void parseDiscovery(const Field& field, Context& ctx, Discovery* out) {
  out->mark = field.mark;
  out->cluster_defaults.mark = field.mark;
  SeenSettings seen;
  parsePluginRef(field, "discovery", ctx, &out->plugin, "cluster_defaults", [&](const Field& f) {
    out->cluster_defaults.mark = f.mark;
    forEachField(f, "cluster_defaults", settingKeys(), ctx,
                 [&](const Field& s) { parseSetting(s, ctx, &out->cluster_defaults, &seen); });
    checkSettings(seen, f.label, ctx);
  });
  if (!seen.balancer) setDefaultBalancer(&out->cluster_defaults);
}

}  // namespace sluice::config::internal
