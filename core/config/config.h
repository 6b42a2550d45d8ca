// Validated, immutable configuration structs. Built once by config::load() on the main thread,
// shared read-only (std::shared_ptr<const Config>) by the workers. Every field has its default
// here; docs/configuration.md documents every YAML key.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::config {

// Where a value came from, for error messages: "file:line:column". line/column are 1-based;
// 0 means unknown.
struct Mark {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string str() const;  // "file:line:col"
};

// A plugin named in the config: `{name: round_robin, config: {...}}` or the shorthand string
// `round_robin`. `config` is the plugin's own YAML subtree (Null when absent); only the plugin
// validates it.
// What a filter's failure means for its request (`failure_mode:` of a filter entry): its
// worker_create/stream_create failed or a hook returned SLUICE_FILTER_ERROR (an exception).
enum class FailureMode : uint8_t {
  kClosed,  // answer 500 (the default: an auth filter that fails must not let requests by)
  kOpen,    // count the error and go on as if the filter were not there
};

struct PluginRef {
  std::string name;  // [A-Za-z0-9._-]+
  std::string path;  // optional explicit .so path (`path:` key), absolute after load (relative
                     // ones are resolved like plugin_paths); empty = search plugin_paths
  YAML::Node config;
  // Filters only.
  FailureMode failure_mode = FailureMode::kClosed;
  bool failure_mode_given = false;  // `failure_mode:` written (a route entry overriding a
                                    // listener filter otherwise takes the listener entry's)
  bool disabled = false;  // in routes[].filters (extend): removes the listener's entry of `name`
  Mark mark;
};

struct Endpoint {
  std::string address;  // "host:port" as written (address.h); resolved when the cluster is built
  uint32_t weight = 1;  // 1..10000
  Mark mark;
};

// What consistent-hash balancers hash on (`hash_key: {header: X-User}` etc.).
struct HashKey {
  enum class Source { kNone, kHeader, kCookie, kQuery, kClientIp, kPath };
  Source source = Source::kNone;
  std::string name;  // header, cookie or query parameter name
};

// A certificate and its key, PEM files (absolute paths after load).
struct TlsCertificate {
  std::string cert_chain;   // leaf first, then intermediates
  std::string private_key;  // RSA or EC
  Mark mark;
};

// Headers that carry a verified client certificate's facts upstream (mTLS). Empty = not sent.
// Copies sent by the client are always removed first.
struct ClientCertHeaders {
  std::string subject = "X-Client-Cert-Subject";     // RFC 2253 distinguished name
  std::string uri_san = "X-Client-Cert-URI";         // URI SANs, comma-separated
  std::string dns_san = "X-Client-Cert-DNS";         // DNS SANs, comma-separated
  std::string fingerprint = "X-Client-Cert-SHA256";  // SHA-256 of the DER, lowercase hex
};

// Downstream TLS on a listener (`tls:`). See docs/configuration.md.
struct TlsServer {
  enum class Verify { kNone, kOptional, kRequired };
  bool enabled = false;
  std::vector<TlsCertificate> certificates;  // chosen by SNI; the first is the default
  bool strict_sni = false;                   // refuse a handshake naming no certificate
  std::string min_version = "1.2";           // "1.2" or "1.3"
  std::string ciphers;                       // TLS 1.2 suites (OpenSSL syntax); "" = default
  std::string ciphersuites;                  // TLS 1.3 suites; "" = default
  std::vector<std::string> alpn = {"http/1.1"};
  std::string client_ca;          // PEM bundle; set = ask for client certificates
  Verify verify = Verify::kNone;  // kRequired when client_ca is set and verify is not given
  ClientCertHeaders client_cert_headers;
  uint32_t handshake_timeout_ms = 10000;
  bool session_tickets = true;
  uint32_t session_ticket_rotation_s = 3600;  // a new ticket key this often; two kept
  uint32_t session_cache_size = 20480;        // server-side session cache entries (0: off)
  uint32_t session_timeout_s = 7200;          // session lifetime
  bool refuse_expired = false;                // an expired certificate is a config error
  Mark mark;
};

// Upstream TLS on a cluster (`tls:`).
struct TlsClient {
  bool enabled = false;
  std::string ca_file;                // "" = the system store
  bool verify = true;                 // verify the chain and the name
  std::string sni;                    // "" = the endpoint's host name (none for IP addresses)
  TlsCertificate client_certificate;  // optional (cert_chain empty = none)
  std::vector<std::string> alpn = {"http/1.1"};
  std::string min_version = "1.2";
  Mark mark;
};

// Active health checking of a cluster's hosts (`health_check:`). Off unless the block is given.
struct HealthCheck {
  enum class Type { kHttp, kTcp };
  bool enabled = false;
  Type type = Type::kHttp;
  std::string path = "/";  // HTTP: the GET target
  uint32_t port = 0;       // 0 = the endpoint's own port
  std::string host;        // HTTP Host header; "" = the endpoint's address
  // HTTP: accepted statuses as inclusive [low, high] ranges; default 200-299.
  std::vector<std::pair<uint32_t, uint32_t>> expected_statuses = {{200, 299}};
  uint32_t interval_ms = 5000;        // between the end of one probe and the start of the next
  uint32_t interval_jitter_ms = 500;  // up to this much is added to each interval, at random
  uint32_t timeout_ms = 1000;         // connect + request + status line
  uint32_t healthy_threshold = 2;     // consecutive successes: unhealthy -> healthy
  uint32_t unhealthy_threshold = 3;   // consecutive failures: healthy -> unhealthy
  Mark mark;
};

// Passive outlier detection (`outlier_detection:`). Off unless the block is given.
struct OutlierDetection {
  bool enabled = false;
  uint32_t consecutive_5xx = 5;              // 0 = off; 5xx responses and gateway failures
  uint32_t consecutive_gateway_failure = 5;  // 0 = off; connect failure, timeout, reset
  uint32_t base_ejection_time_ms = 30000;    // ejection = base x times ejected ...
  uint32_t max_ejection_time_ms = 300000;    // ... capped at this
  uint32_t max_ejection_percent = 50;        // floor(hosts x percent / 100), at most hosts - 1
  Mark mark;
};

// Retry conditions (`retry_on`), a bit set.
enum RetryOn : uint32_t {
  kRetryOnConnectFailure = 1u << 0,  // refused / unreachable / connect timeout (nothing sent)
  kRetryOnReset = 1u << 1,           // reset before any response byte
  kRetryOn502 = 1u << 2,
  kRetryOn503 = 1u << 3,
  kRetryOn504 = 1u << 4,
  kRetryOnPerTryTimeout = 1u << 5,  // no response head within response_timeout_ms
};

// `retry_policy:` of a cluster (core/config/parse_retry.cc, docs/configuration.md).
struct RetryPolicy {
  uint32_t retries = 1;  // extra attempts (the old top-level `retries` sets this)
  uint32_t retry_on = kRetryOnConnectFailure | kRetryOnReset;
  uint32_t backoff_base_ms = 25;       // first backoff interval; doubles per retry, full jitter
  uint32_t backoff_max_ms = 250;       // cap of the backoff interval
  uint32_t budget_percent = 20;        // active retries <= this % of the cluster's active requests
                                       // on their first try
  uint32_t min_retry_concurrency = 3;  // ... but at least this many concurrent retries
  uint64_t max_body_bytes = 65536;     // request body kept for a replay; larger: no retry once
                                       // bytes went upstream
};

// `circuit_breakers:` of a cluster; 0 = unlimited (the default for each).
struct CircuitBreakers {
  uint32_t max_connections = 0;       // upstream connections open (all hosts, all workers)
  uint32_t max_pending_requests = 0;  // attempts waiting for a new connection to open
  uint32_t max_requests = 0;          // requests in flight to the cluster
  uint32_t max_retries = 0;           // retries in flight (in backoff or on the wire)
};

struct Cluster {
  std::string name;    // [A-Za-z0-9._-]+, unique; empty in Discovery::cluster_defaults
  PluginRef balancer;  // default {name: round_robin} (its mark is then the cluster's)
  std::vector<Endpoint> endpoints;
  HashKey hash_key;
  uint32_t connect_timeout_ms = 1000;
  uint32_t response_timeout_ms = 15000;  // request sent → response headers received
  uint32_t idle_timeout_ms = 60000;      // idle pooled upstream connection lifetime
  uint32_t max_idle_connections = 64;    // per host per worker
  // Per-host concurrency and the wait queue (core/upstream/wait_queue.h).
  uint32_t max_requests_per_host = 0;  // in flight per host over all workers; 0 = no limit
  uint32_t max_queue = 1024;           // requests waiting for a host with room; 0 = none (503)
  uint32_t queue_timeout_ms = 1000;    // longest wait in the queue, then 503 + Retry-After
  RetryPolicy retry_policy;
  CircuitBreakers circuit_breakers;
  uint32_t request_timeout_ms = 0;  // request head → upstream response head, retries and
                                    // backoff included (504); 0 = none; routes may override
  uint32_t max_response_header_bytes = 65536;  // upstream response header section → 502
  uint32_t max_response_header_count = 100;
  std::string deadline_header;  // sends the remaining time budget (ms) upstream; "" = not sent
  TlsClient tls;
  HealthCheck health_check;
  OutlierDetection outlier_detection;
  uint32_t panic_threshold_percent = 50;  // 0 = off: below this healthy share, use every host
  uint32_t slow_start_ms = 0;             // 0 = off: ramp a new or recovered host's weight
  Mark mark;
};

// How routes[].filters combine with the listener's chain.
enum class FiltersMode : uint8_t {
  kExtend,   // the listener's chain, then the route's entries; an entry naming a listener filter
             // replaces that entry in place (its own config: per-route config) or, with
             // `disabled: true`, removes it
  kReplace,  // only the route's entries
};

struct Route {
  std::string name;                // optional; "" = unnamed (attribute: the prefix)
  std::string prefix;              // must start with '/'
  std::string cluster;             // target cluster name
  std::vector<PluginRef> filters;  // per-route filter entries (see FiltersMode)
  FiltersMode filters_mode = FiltersMode::kExtend;
  std::optional<std::string> prefix_rewrite;  // replaces `prefix` in the upstream path
  std::optional<uint32_t> timeout_ms;         // overrides the cluster's request_timeout_ms
  std::optional<uint32_t> retry_on;           // overrides the cluster's retry_policy.retry_on
  Mark mark;
};

// Limits on what a downstream client may send (DESIGN.md §6).
struct Limits {
  uint32_t max_request_line_bytes = 8192;      // longer request line → 414
  uint32_t max_header_bytes = 65536;           // whole header section → 431
  uint32_t max_header_count = 100;             // more fields → 431
  uint64_t max_request_body_bytes = 0;         // 0 = unlimited; larger body → 413
  uint32_t request_header_timeout_ms = 10000;  // first byte → headers complete, else 408
  uint32_t idle_timeout_ms = 60000;            // keep-alive idle downstream connection
};

// One `access_log` entry of a listener: one line per request to a file or stderr.
struct AccessLog {
  std::string path;                 // "stderr", or a file path (absolute after load: relative ones
                                    // are resolved against the config file's directory)
  std::string format = "json";      // "json" or a format string (core/accesslog/format.h)
  uint64_t buffer_bytes = 1048576;  // per worker: lines waiting for the writer; more are dropped
  Mark mark;                        // the entry
  Mark path_mark;                   // its `path` value (for "cannot open" errors)
};

// How a listener's accepted connections are spread over the workers
// (listeners[].connection_balance).
enum class ConnectionBalance : uint8_t {
  // The kernel's SO_REUSEPORT hash of the client's address and port picks the worker, and a
  // worker holding more than one connection over the least loaded worker hands a new one to it.
  kExact,
  // The kernel's choice stands: no hand-off between workers.
  kKernel,
};

struct Listener {
  std::string name;
  std::string address;             // "host:port" / "[ipv6]:port", unique among listeners
  std::string context_path;        // "" or "/gateway" (normalised: leading '/', no trailing '/')
  std::vector<PluginRef> filters;  // filter chain, in request order
  TlsServer tls;
  std::vector<AccessLog> access_logs;
  // Upgrade protocols (RFC 9110 §7.8) passed to the upstream and tunnelled after its 101,
  // lowercase tokens ("websocket"); an Upgrade naming none of them is stripped. Empty: none.
  std::vector<std::string> upgrades = {"websocket"};
  uint32_t tunnel_idle_timeout_ms = 3600000;  // an upgraded tunnel with no bytes either way
  // A request header carrying the caller's remaining time budget (ms) that this listener
  // trusts: it can shorten a request's deadline (0 → 504 at once). "" = none trusted.
  std::string trusted_deadline_header;
  // Length of the listen queue of each of its sockets (connections the kernel has completed and
  // sluice has not accepted yet): 1..65535, the kernel caps it at net.core.somaxconn. 0 (not
  // set): net.core.somaxconn itself (/proc/sys/net/core/somaxconn), as nginx takes 511 and
  // HAProxy its maxconn.
  uint32_t backlog = 0;
  ConnectionBalance connection_balance = ConnectionBalance::kExact;
  Mark mark;
};

struct Discovery {
  PluginRef plugin;          // {name: zookeeper, config: {...}}
  Cluster cluster_defaults;  // template for clusters this discovery creates
  Mark mark;
};

struct Config {
  std::string file;              // path it was read from ("<embedded>" for the built-in demo)
  uint32_t workers = 0;          // 0 = auto (number of cores)
  std::string admin_address;     // "" = no admin listener; `admin:` alone = 127.0.0.1:9901;
                                 // no listener may share its address
  Mark admin_mark;               // where admin.address was written (or the admin key)
  std::string admin_token_file;  // absolute; "" = POST endpoints need no token
  std::string admin_token;       // its content, surrounding whitespace trimmed (never empty)
  std::vector<std::string> plugin_paths;  // absolute after load (relative ones are resolved
                                          // against the config file's directory)
  Limits limits;
  uint32_t drain_timeout_ms = 15000;
  bool watch_config = false;  // reload when the file changes (inotify)
  std::string text;           // the YAML as read (for GET /config and its hash)
  std::vector<Listener> listeners;
  std::vector<Route> routes;
  std::vector<Cluster> clusters;
  std::vector<Discovery> discovery;
};

// The resilience settings of `c` as one string (core/config/parse_retry.cc): a reload that
// changes any of them builds a new ClusterInfo.
std::string resilienceSettingsKey(const Cluster& c);

// Parses and validates. On success returns the config; on failure returns nullptr and appends
// one "file:line:col: reason" line per problem to `errors` (all problems found, not just the
// first). Unknown keys are errors. Does not load plugins (see plugin::Registry).
std::shared_ptr<const Config> loadFile(const std::string& path, std::vector<std::string>* errors);
// Same, from text; `name` stands in for the file name in marks.
std::shared_ptr<const Config> loadString(const std::string& text, const std::string& name,
                                         std::vector<std::string>* errors);

}  // namespace sluice::config
