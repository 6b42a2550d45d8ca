// Internal: the walk from a parsed YAML document to config structs. Each function reads one
// part of the document, applies the per-value checks (types, ranges, address syntax, names)
// and records every problem in the Context; cross-checks between parts live in validate.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"
#include "core/config/reader.h"

namespace sluice::config::internal {

// Marks of values that only the cross-checks need. The vectors are parallel to the config's
// (one entry per listener / route / cluster parsed, even one with errors).
struct Spans {
  Mark listeners;                   // the `listeners` key, else the document start
  std::vector<Mark> listener_name;  // the `name` value of each listener
  std::vector<Mark> listener_address;
  std::vector<Mark> route_prefix;
  std::vector<Mark> route_cluster;
  std::vector<Mark> route_name;  // the `name` value of each route (the route when unnamed)
  std::vector<Mark> cluster_name;
};

// Walks the whole document into *config (which holds the defaults on entry) and *spans.
// Relative plugin paths are resolved against ctx.baseDir().
void parseDocument(const YAML::Node& root, Context& ctx, Config* config, Spans* spans);

// Reads a plugin reference: the shorthand string `name`, or a mapping {name, path, config}
// (`what` names it in messages, e.g. "balancer"). A relative `path` is resolved against
// ctx.baseDir(). When `extra_key` is not empty that key is also allowed in the mapping form and
// handed to `on_extra` (a discovery entry's `cluster_defaults`).
void parsePluginRef(const Field& field, std::string_view what, Context& ctx, PluginRef* out,
                    std::string_view extra_key = {},
                    const std::function<void(const Field&)>& on_extra = nullptr);

// Filter entries (parse_filters.cc). Reads one entry of a listener's `filters` or a route's
// `routes[].filters`: the plugin reference keys plus `failure_mode: open|closed` and, on route
// entries only (`on_route`), `disabled: true|false`.
void parseFilterEntry(const Field& field, bool on_route, Context& ctx, PluginRef* out);
// Reads a route's `filters_mode`: extend | replace.
void parseFiltersMode(const Field& field, Context& ctx, FiltersMode* out);
// Cross-checks of routes[].filters against the listeners' chains (validate.cc calls it):
// a `disabled` entry must name a filter of some listener chain and carry no config; with
// `filters_mode: replace` nothing can be disabled; an extend entry naming a filter that a
// listener chain holds twice is ambiguous; a name appears at most once in one route's filters
// when it overrides a listener filter.
void validateRouteFilters(const Config& config, Context& ctx);

// Reads a listener's `access_log`: one entry (a mapping) or a list of them. Format strings are
// checked here (unknown fields are errors); files are opened later, when the config is built.
void parseAccessLogs(const Field& field, Context& ctx, std::vector<AccessLog>* out);

// Resilience settings (parse_retry.cc): true for the cluster keys parseResilienceSetting reads
// (retry_policy, circuit_breakers, request_timeout_ms, max_response_header_bytes,
// max_response_header_count, deadline_header).
bool isResilienceKey(std::string_view key);
void parseResilienceSetting(const Field& field, Context& ctx, Cluster* out);
// Reads a `retry_on` list (connect_failure, reset, 502, 503, 504, 5xx, per_try_timeout) into a
// config::RetryOn bit set; the list replaces the defaults.
void parseRetryOn(const Field& field, Context& ctx, uint32_t* out);
// Reads a header field name for the config: letters, digits, '-' and '_' (a strict subset of
// RFC 9110 tokens, so it survives every proxy on the way); "" is allowed (= none). parse.cc.
bool readHeaderName(const Field& field, Context& ctx, std::string* out);

// Reads one `clusters` entry; *name_mark gets the mark of its `name` value.
void parseCluster(const Field& field, Context& ctx, Cluster* out, Mark* name_mark);

// Reads a listener's `tls` mapping (downstream TLS); sets out->enabled.
void parseListenerTls(const Field& field, Context& ctx, TlsServer* out);
// Reads a cluster's `tls` mapping (upstream TLS), or `tls: true|false`.
void parseClusterTls(const Field& field, Context& ctx, TlsClient* out);

// The health keys of a cluster (parse_health.cc): `health_check`, `outlier_detection`,
// `panic_threshold_percent`, `slow_start_ms`. parseHealthSetting returns false for other keys.
const std::vector<std::string_view>& healthSettingKeys();
bool parseHealthSetting(const Field& field, Context& ctx, Cluster* out);
// Reads `max_requests_per_host`, `max_queue` or `queue_timeout_ms` of a cluster (parse_queue.cc);
// false when `field` is none of them.
bool parseQueueSetting(const Field& field, Context& ctx, Cluster* out);

// Reads one `discovery` entry: its plugin reference and `cluster_defaults`.
void parseDiscovery(const Field& field, Context& ctx, Discovery* out);

}  // namespace sluice::config::internal
