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
#define SLUICE_ABI_MINOR 0u

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
