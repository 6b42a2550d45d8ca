/*
 * sluice plugin C ABI — common part.
 *
 * Every sluice plugin (filter, balancer, discovery) is a shared object that exports exactly one
 * symbol, `sluice_plugin_entry`, returning a pointer to a constant sluice_plugin_descriptor. The
 * host checks abi_major, abi_minor, struct_size and kind before it touches anything else.
 *
 * Versioning rules:
 *  - abi_major changes only when an existing struct or hook changes meaning; the host refuses any
 *    plugin whose abi_major differs from SLUICE_ABI_MAJOR.
 *  - abi_minor grows when fields are appended to a table. The host refuses a plugin built against
 *    a newer minor than its own (the plugin may rely on host callbacks the host lacks); an older
 *    minor is accepted, and fields beyond the plugin's struct_size read as NULL/0.
 *  - Tables are append-only. Optional hooks may be NULL.
 *
 * Ownership: pointers handed to a hook are borrowed for the duration of the call unless the hook's
 * comment says otherwise. Strings are (data, len) pairs and are NOT NUL-terminated unless stated.
 * No C++ type, exception or allocator crosses this boundary.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLUICE_ABI_MAJOR 1u
/* 1.1: sluice_host_api.metrics (plugin metrics).
 * 1.2: filters: SLUICE_FILTER_ERROR, PAUSE from every data hook, timers, post, request context,
 *      attributes, body buffering and replacement, local replies with headers, the upstream
 *      path; config: resolve_path and depends_on_file.
 * 1.3: filters: sluice_filter_plugin.unused_hooks (hooks a config instance never needs).
 * 1.4: filters: header names interned once (header_name) and the header calls by handle
 *      (header_get_named, header_set_named, header_add_named, header_remove_named). */
#define SLUICE_ABI_MINOR 4u

/* Name of the one symbol a plugin exports (see SLUICE_PLUGIN_EXPORT in the SDK). */
#define SLUICE_PLUGIN_ENTRY_SYMBOL "sluice_plugin_entry"

/* Plugin kinds. Explicit numeric values: never reorder. */
typedef uint32_t sluice_plugin_kind;
#define SLUICE_PLUGIN_KIND_FILTER 1u
#define SLUICE_PLUGIN_KIND_BALANCER 2u
#define SLUICE_PLUGIN_KIND_DISCOVERY 3u

/* Log levels, for sluice_host_api.log. */
typedef uint32_t sluice_log_level;
#define SLUICE_LOG_DEBUG 0u
#define SLUICE_LOG_INFO 1u
#define SLUICE_LOG_WARN 2u
#define SLUICE_LOG_ERROR 3u

/* A borrowed byte string: `data` points to `len` bytes, not NUL-terminated. {NULL, 0} is "absent". */
typedef struct sluice_str {
  const char* data;
  size_t len;
} sluice_str;

/* Config tree node types (see sluice_config_api). */
typedef uint32_t sluice_node_type;
#define SLUICE_NODE_NULL 0u   /* absent key, or explicit null */
#define SLUICE_NODE_SCALAR 1u /* string, number or bool: read with as_* */
#define SLUICE_NODE_SEQUENCE 2u
#define SLUICE_NODE_MAP 3u

/* Opaque handle to one node of the plugin's YAML config subtree. Valid only during the
 * config_create call it was passed to; copy out what you keep. */
typedef struct sluice_config_node sluice_config_node;

/* Read-only accessors for the plugin's YAML config subtree. Owned by the host; valid during
 * config_create only. All functions are safe on a NULL-type node (they return empty/0/NULL type). */
typedef struct sluice_config_api {
  uint32_t struct_size;
  /* Type of `node`. */
  sluice_node_type (*type)(const sluice_config_node* node);
  /* Map lookup: child for `key` (NUL-terminated), or a node of type SLUICE_NODE_NULL. */
  const sluice_config_node* (*get)(const sluice_config_node* node, const char* key);
  /* Number of children of a sequence or map; 0 otherwise. */
  size_t (*size)(const sluice_config_node* node);
  /* i-th element of a sequence, or the i-th value of a map (0 <= i < size). */
  const sluice_config_node* (*at)(const sluice_config_node* node, size_t i);
  /* i-th key of a map (0 <= i < size) as a borrowed string. */
  sluice_str (*key_at)(const sluice_config_node* node, size_t i);
  /* Scalar text as written in YAML (borrowed; valid during config_create). */
  sluice_str (*scalar)(const sluice_config_node* node);
  /* 1-based line and column of the node in its file, for error messages. */
  uint32_t (*line)(const sluice_config_node* node);
  uint32_t (*column)(const sluice_config_node* node);

  /* ---- ABI 1.2: read a field only when struct_size covers it. ---- */

  /* Resolves `path` the way the host resolves paths in its own config: an absolute path stays as
   * it is, a relative one is taken against the directory of the config file (the current
   * directory for the embedded default config). Writes the result, NUL-terminated, into `out`
   * (`capacity` bytes) and returns its length; returns 0 when `path` is empty or the result does
   * not fit. During config_create only; `node` is any node of the config being read. */
  size_t (*resolve_path)(const sluice_config_node* node, sluice_str path, char* out,
                         size_t capacity);
  /* Declares that the config instance being created depends on the file at `path` (resolved as
   * above): the host records a digest of the file's content now, and a reload rebuilds this
   * instance when the content differs, even when its YAML did not change (keys files, htpasswd
   * files, JWKS). Read the file yourself as well; this only tells the host to look. Returns 0, or
   * -1 when the file cannot be read (nothing recorded). During config_create only. */
  int (*depends_on_file)(const sluice_config_node* node, sluice_str path);
} sluice_config_api;

/* Where a plugin reports why it refused its config: the host prints
 * "<file>:<line>:<col>: plugin <name>: <message>". Write a NUL-terminated message of at most
 * `capacity` bytes into `message`; set line/column (1-based) to the offending node, or leave 0 to
 * point at the plugin's config block. */
typedef struct sluice_error {
  char* message;
  size_t capacity;
  uint32_t line;
  uint32_t column;
} sluice_error;

/* ---- Metrics (ABI 1.1) ----
 *
 * A plugin declares its metrics while its config instance is being created (from config_create,
 * on the main thread) and updates them from any hook on any thread until config_destroy returns.
 * Each declaration is one series: a name, a help text, and label names with their values, fixed
 * at declaration: a plugin cannot create label values at run time (declare one series per value
 * of a small, known set instead). The host exports it as `sluice_plugin_<plugin>_<name>` in
 * GET /stats/prometheus (the plugin's name with every character other than [A-Za-z0-9_] made
 * '_'), with a `_bucket`/`_sum`/`_count` triple for histograms.
 *
 * Cost of an update: a counter or histogram update on a sluice worker or the main thread is a
 * plain load and store in that thread's own memory (a few ns, no contention); on a thread of the
 * plugin's own (a discovery client's) it is an atomic read-modify-write on memory shared by
 * such threads (~20 ns uncontended). A gauge is one atomic shared by every thread (its set must
 * be exact), so each update is an atomic operation on a shared cache line: keep gauges off the
 * per-request path of filters and balancers. */

typedef uint32_t sluice_metric_kind;
#define SLUICE_METRIC_COUNTER 1u   /* only grows: add(delta >= 0) */
#define SLUICE_METRIC_GAUGE 2u     /* goes up and down: set(), add(any delta) */
#define SLUICE_METRIC_HISTOGRAM 3u /* observe(value): fixed buckets, a sum and a count */

/* Opaque handle to one declared series. Valid from its declare() until the config_destroy of the
 * config instance whose config_create declared it has returned. */
typedef struct sluice_metric sluice_metric;

/* What declare() takes. Everything is borrowed for the call (the host copies it). */
typedef struct sluice_metric_spec {
  uint32_t struct_size; /* sizeof(sluice_metric_spec) */
  sluice_metric_kind kind;
  /* [A-Za-z_][A-Za-z0-9_]*, at most 100 bytes, e.g. "publications_total" (counters should end
   * in _total, durations in _seconds). */
  sluice_str name;
  sluice_str help; /* one line, shown in # HELP */
  /* label_count (at most 8) label names ([A-Za-z_][A-Za-z0-9_]*, not "le", no leading "__")
   * and their values (any UTF-8; escaped by the host). May be NULL when label_count is 0. */
  const sluice_str* label_names;
  const sluice_str* label_values;
  size_t label_count;
  /* Histograms: bucket upper bounds, ascending, finite, >= 0, at most 64 (+Inf is implied).
   * NULL/0 = the host's latency buckets in seconds (0.0005 .. 60). Ignored for other kinds. */
  const double* buckets;
  size_t bucket_count;
} sluice_metric_spec;

/* sluice_host_api.metrics: NULL on hosts older than ABI 1.1. */
typedef struct sluice_metrics_api {
  uint32_t struct_size;
  /* Declares one series. Main thread, only while a config_create of this plugin runs (pass the
   * host_ctx of that call's sluice_host_api). Declaring the same name with the same label values
   * again (in this config_create or a later one, e.g. after a reload) returns a handle to the same
   * series, so values carry on across reloads. Returns NULL, with a message in `err` (may be
   * NULL) when: called outside config_create, a bad name, label or bucket list, or the name is
   * already declared with another kind, other label names or other buckets. */
  sluice_metric* (*declare)(const void* host_ctx, const sluice_metric_spec* spec,
                            sluice_error* err);
  /* Counter: adds `delta` (negative deltas are ignored). Gauge: adds `delta` (may be negative).
   * Histogram: ignored. Any thread. NULL `metric` is ignored. */
  void (*add)(sluice_metric* metric, int64_t delta);
  /* Gauge: sets the value. Other kinds: ignored. Any thread. */
  void (*set)(sluice_metric* metric, int64_t value);
  /* Histogram: counts one observation of `value` (in the metric's unit, e.g. seconds; negative
   * counts as 0; kept with 6 decimal places). Other kinds: ignored. Any thread. */
  void (*observe)(sluice_metric* metric, double value);
} sluice_metrics_api;

/* Callbacks the host gives every plugin. Owned by the host, valid until the plugin is unloaded.
 * Every function here may be called from any thread unless stated. */
typedef struct sluice_host_api {
  uint32_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  /* Log `msg` (len bytes) at `level`, tagged with the plugin's name. Thread-safe. */
  void (*log)(const void* host_ctx, sluice_log_level level, const char* msg, size_t len);
  /* Opaque context to pass back to log(). */
  const void* host_ctx;
  /* Monotonic clock in microseconds. Thread-safe. */
  uint64_t (*now_us)(void);
  /* Config tree accessors (valid during config_create only). */
  const sluice_config_api* config;
  /* Kind-specific host tables. NULL for other kinds. */
  const struct sluice_filter_host_api* filter;
  const struct sluice_balancer_host_api* balancer;
  const struct sluice_discovery_host_api* discovery;
  /* ABI 1.1: plugin metrics (see sluice_metrics_api). Read it only when struct_size covers it. */
  const sluice_metrics_api* metrics;
} sluice_host_api;

/* What a plugin's entry point returns. The pointer must stay valid while the .so is loaded. */
typedef struct sluice_plugin_descriptor {
  uint32_t abi_major;   /* SLUICE_ABI_MAJOR the plugin was built against */
  uint32_t abi_minor;   /* SLUICE_ABI_MINOR the plugin was built against */
  uint32_t struct_size; /* sizeof(sluice_plugin_descriptor) as the plugin saw it */
  sluice_plugin_kind kind;
  const char* name;    /* NUL-terminated, e.g. "round_robin"; must match the config's name */
  const char* version; /* NUL-terminated, free-form, e.g. "1.0.0" */
  /* Points to a sluice_filter_plugin, sluice_balancer_plugin or sluice_discovery_plugin
   * according to `kind`; that table starts with its own struct_size. */
  const void* hooks;
} sluice_plugin_descriptor;

typedef const sluice_plugin_descriptor* (*sluice_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
