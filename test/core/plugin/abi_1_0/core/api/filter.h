/*
 * sluice plugin C ABI — HTTP filters.
 *
 * Lifetimes (outermost first):
 *   plugin .so (dlopen .. dlclose)
 *     config instance   config_create/config_destroy   main thread, one per filter entry in YAML
 *       worker instance  worker_create/worker_destroy   the worker's own thread, one per worker
 *         stream state    stream_create/stream_destroy  the worker's thread, one per request
 *
 * A config instance outlives every worker instance made from it; a worker instance outlives every
 * stream state made from it. On reload, a new config instance is built beside the old one; the
 * old one is destroyed once the last request that started on it has ended.
 *
 * Hooks run in filter-chain order for the request (first listed filter first) and in reverse
 * order for the response. Each returns a sluice_filter_status.
 */
#pragma once

#include "core/api/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque per-request handle. Valid from stream_create until stream_destroy returns; only on the
 * worker thread that created it. */
typedef struct sluice_stream sluice_stream;

/* Hook results. Explicit numeric values: never reorder. */
typedef uint32_t sluice_filter_status;
/* Go on with the next filter. */
#define SLUICE_FILTER_CONTINUE 0u
/* Stop the chain: the filter has called send_local_reply (if it did not, the host answers 500). */
#define SLUICE_FILTER_STOP 1u
/* Stop here for now: the filter will call resume() later, from the same worker thread (e.g. from
 * a timer or an asynchronous lookup). Valid from on_request_headers only; elsewhere read as
 * CONTINUE. */
#define SLUICE_FILTER_PAUSE 2u

/* Which header map an accessor works on. */
typedef uint32_t sluice_header_map;
#define SLUICE_HEADERS_REQUEST 0u  /* request headers, as they will be sent upstream */
#define SLUICE_HEADERS_RESPONSE 1u /* response headers, as they will be sent downstream */

/* Host callbacks for filters (sluice_host_api.filter). Every function: worker thread of the
 * stream only; `stream` must be the handle passed to the current hook (or to stream_create).
 * Header names compare case-insensitively (RFC 9110 §5.1). Returned strings are borrowed and
 * stay valid until the next change to the same header map or the end of the hook, whichever
 * comes first. */
typedef struct sluice_filter_host_api {
  uint32_t struct_size;
  /* Request method, e.g. "GET". */
  sluice_str (*method)(const sluice_stream* stream);
  /* Request target as the client sent it (origin-form path plus query), before any rewrite. */
  sluice_str (*path)(const sluice_stream* stream);
  /* Downstream peer address "ip:port" ("[v6]:port" for IPv6). */
  sluice_str (*client_address)(const sluice_stream* stream);
  /* Response status code; 0 before response headers exist. */
  uint32_t (*response_status)(const sluice_stream* stream);
  /* Value of the `index`-th (0-based) header called `name`, or {NULL,0} when there is none. */
  sluice_str (*header_get)(const sluice_stream* stream, sluice_header_map map, sluice_str name,
                           size_t index);
  /* Number of header fields (each repeated name counts once per field). */
  size_t (*header_count)(const sluice_stream* stream, sluice_header_map map);
  /* The i-th header field in wire order. Returns 0 and fills name/value, or -1 when i is past the
   * end. */
  int (*header_at)(const sluice_stream* stream, sluice_header_map map, size_t i, sluice_str* name,
                   sluice_str* value);
  /* Replace every field called `name` by one field with `value` (adds it when absent).
   * Returns 0, or -1 when name/value are not valid field syntax (RFC 9110 §5.1, §5.5): the
   * header map is then unchanged. */
  int (*header_set)(sluice_stream* stream, sluice_header_map map, sluice_str name,
                    sluice_str value);
  /* Append one field. Same return values as header_set. */
  int (*header_add)(sluice_stream* stream, sluice_header_map map, sluice_str name,
                    sluice_str value);
  /* Remove every field called `name`. Returns how many were removed. */
  size_t (*header_remove)(sluice_stream* stream, sluice_header_map map, sluice_str name);
  /* Answer the request locally with `status` (100..599 are not accepted: 200..599 only),
   * `content_type` (may be empty) and `body` (copied). Call it from a request hook, then return
   * SLUICE_FILTER_STOP; or call it while paused, instead of resume(). */
  void (*send_local_reply)(sluice_stream* stream, uint32_t status, sluice_str content_type,
                           sluice_str body);
  /* Continue a chain the filter paused (SLUICE_FILTER_PAUSE) with the next filter. */
  void (*resume)(sluice_stream* stream);
  /* Index of the worker running this stream (0-based). */
  uint32_t (*worker_index)(const sluice_stream* stream);
} sluice_filter_host_api;

/* The filter's table (sluice_plugin_descriptor.hooks). Optional hooks may be NULL. */
typedef struct sluice_filter_plugin {
  uint32_t struct_size;

  /* Main thread. Build and validate a config instance from the filter's YAML `config` subtree
   * (`cfg` may be a SLUICE_NODE_NULL node when the YAML has none). Unknown keys should be refused.
   * Returns the instance, or NULL after filling `err`. `host` stays valid until config_destroy. */
  void* (*config_create)(const sluice_host_api* host, const sluice_config_node* cfg,
                         sluice_error* err);
  /* Main thread. Called after every worker instance of this config was destroyed. */
  void (*config_destroy)(void* config);

  /* Worker thread `worker_index`. One per worker per config instance. NULL means failure (the
   * worker then answers 500 for requests through this filter, and logs it). */
  void* (*worker_create)(void* config, uint32_t worker_index);
  /* Worker thread. */
  void (*worker_destroy)(void* worker);

  /* Worker thread, at request start. Optional: when NULL, hooks get the worker instance as
   * `self`. Otherwise the returned pointer is `self` (NULL means failure: 500). */
  void* (*stream_create)(void* worker, sluice_stream* stream);
  /* Worker thread, after on_log. Optional. */
  void (*stream_destroy)(void* self);

  /* Request headers complete, before routing (hop-by-hop fields already removed, X-Forwarded-*
   * added: the headers as they will go upstream; the router runs after the last filter).
   * `end_stream` is 1 when the request has no body. Optional (NULL = CONTINUE). */
  sluice_filter_status (*on_request_headers)(void* self, sluice_stream* stream, int end_stream);
  /* A piece of request body (read-only, borrowed for the call). `end_stream` 1 on the last one.
   * CONTINUE or STOP. Optional. */
  sluice_filter_status (*on_request_body)(void* self, sluice_stream* stream, const char* data,
                                          size_t len, int end_stream);
  /* Response headers from upstream (or of a local reply), before they go downstream. May change
   * them; STOP replaces the response by the local reply the filter sent. Optional. */
  sluice_filter_status (*on_response_headers)(void* self, sluice_stream* stream, int end_stream);
  /* A piece of response body (read-only). CONTINUE or STOP (STOP resets the downstream
   * connection when bytes have already gone out). Optional. */
  sluice_filter_status (*on_response_body)(void* self, sluice_stream* stream, const char* data,
                                           size_t len, int end_stream);
  /* The request ended (completed, reset or failed); always called once per stream_create.
   * Optional. Access log, metrics. */
  void (*on_log)(void* self, const sluice_stream* stream);
} sluice_filter_plugin;

#ifdef __cplusplus
}
#endif
