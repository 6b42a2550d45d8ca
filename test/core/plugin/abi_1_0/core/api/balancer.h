/*
 * sluice plugin C ABI — load balancers.
 *
 * Lifetimes: plugin .so → config instance (main thread, one per cluster that names the balancer)
 * → balancer instance (one per cluster per worker, created and used on that worker's thread only,
 * so a balancer needs no locks).
 *
 * Call order on a balancer instance (all on its worker thread):
 *   instance_create, on_host_set (first set, possibly empty),
 *   then any mix of pick / on_result / on_host_set, then instance_destroy.
 */
#pragma once

#include "core/api/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One upstream endpoint as the balancer sees it. */
typedef struct sluice_host_entry {
  sluice_str address; /* "ip:port" */
  uint32_t weight;    /* >= 1 */
  uint32_t healthy;   /* 1 = may receive traffic (healthy, not ejected), 0 = avoid */
  sluice_str zone;    /* may be empty */
  /* Metadata as key/value pairs: metadata[2*i] is a key, metadata[2*i+1] its value. */
  const sluice_str* metadata;
  size_t metadata_count; /* number of pairs */
} sluice_host_entry;

/* An immutable host set. Owned by the host; valid from the on_host_set call that delivers it
 * until the next on_host_set or instance_destroy on the same instance. */
typedef struct sluice_host_set {
  uint64_t version; /* grows with every change of this cluster's hosts or health */
  size_t count;
  const sluice_host_entry* hosts;
  const void* host_ctx; /* pass to sluice_balancer_host_api functions */
} sluice_host_set;

/* What the balancer knows of the request being balanced. Borrowed for the pick call. */
typedef struct sluice_pick_context {
  uint32_t struct_size;
  /* Hash key computed from the cluster's `hash_key` policy (header, cookie, query parameter,
   * client IP or path); empty when the cluster has none or the request lacks it. */
  sluice_str hash_key;
  /* Indexes (into the current host set) already tried for this request, most recent last.
   * A balancer should avoid them when another healthy host exists. */
  const uint32_t* tried;
  size_t tried_count;
} sluice_pick_context;

/* How a request to a picked host ended (on_result). Explicit values: never reorder. */
typedef uint32_t sluice_outcome;
#define SLUICE_OUTCOME_SUCCESS 0u         /* a response came back (any status below 500) */
#define SLUICE_OUTCOME_HTTP_5XX 1u        /* the upstream answered 5xx */
#define SLUICE_OUTCOME_CONNECT_FAILURE 2u /* refused, unreachable, or connect timeout */
#define SLUICE_OUTCOME_TIMEOUT 3u         /* no response within the response timeout */
#define SLUICE_OUTCOME_RESET 4u           /* connection reset or bad response */
#define SLUICE_OUTCOME_CANCELLED 5u       /* the client went away first */

/* Host callbacks for balancers (sluice_host_api.balancer). */
typedef struct sluice_balancer_host_api {
  uint32_t struct_size;
  /* In-flight requests on host `index` of `set`, across all workers (an atomic read; decremented
   * when a request ends, aborted or not). Worker thread of the instance. */
  uint32_t (*active_requests)(const sluice_host_set* set, uint32_t index);
  /* A uniformly random 64-bit number from the worker's own generator. Worker thread. */
  uint64_t (*random)(void);
} sluice_balancer_host_api;

/* Result of pick: a host index, or SLUICE_PICK_NONE when no host can take the request
 * (the host then answers 503). */
#define SLUICE_PICK_NONE (-1)

/* The balancer's table (sluice_plugin_descriptor.hooks). */
typedef struct sluice_balancer_plugin {
  uint32_t struct_size;

  /* Main thread. Validate the balancer's YAML `config` subtree; NULL plus `err` to refuse. */
  void* (*config_create)(const sluice_host_api* host, const sluice_config_node* cfg,
                         sluice_error* err);
  /* Main thread, after every instance of this config was destroyed. */
  void (*config_destroy)(void* config);

  /* Worker thread. One instance per cluster per worker. `cluster` is NUL-terminated and borrowed
   * for the call. NULL means failure (the cluster answers 503 on this worker, and it is logged). */
  void* (*instance_create)(void* config, const char* cluster, uint32_t worker_index);
  /* Worker thread. */
  void (*instance_destroy)(void* instance);

  /* Worker thread. Called once after instance_create and whenever hosts, weights or health
   * change. Keep the pointer until the next call; rebuild schedules here, not in pick. */
  void (*on_host_set)(void* instance, const sluice_host_set* set);
  /* Worker thread, once per upstream attempt. Returns an index into the current host set with
   * healthy == 1, or SLUICE_PICK_NONE. Must not block. */
  int64_t (*pick)(void* instance, const sluice_pick_context* ctx);
  /* Worker thread, when an attempt on host `index` ends. `latency_us` runs from pick to response
   * headers (or failure). Optional. */
  void (*on_result)(void* instance, uint32_t index, sluice_outcome outcome, uint64_t latency_us);
} sluice_balancer_plugin;

#ifdef __cplusplus
}
#endif
