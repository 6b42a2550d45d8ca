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

/* Hook results. Explicit numeric values: never reorder. Every hook that returns a status gives it
 * the same meaning (the host's filter-chain runner, core/proxy/filter_manager.h, is the one place
 * that reads them):
 *
 *   CONTINUE  go on with the next filter (the one after in the request direction, before in the
 *             response direction), then with the router or the downstream.
 *   STOP      stop the chain for good: the filter has called send_local_reply (or
 *             send_local_reply_headers) during the hook. If it did not, the host answers 500 and
 *             counts an error for the filter. From a response hook the local reply replaces the
 *             upstream's response when no byte of it went downstream yet; otherwise the
 *             downstream connection is reset.
 *   PAUSE     stop iterating for now, keep the request: the filter calls resume() (or a local
 *             reply) later, from the stream's worker thread, e.g. from a timer or a post. Valid
 *             from every data hook (headers and body, both directions). While paused, data of
 *             that direction that arrives is held by the host (flow control stops reading when
 *             it holds more than 256 KiB) and goes through the chain from its first filter, in
 *             order, once the paused piece went on after resume(). Nothing of that direction
 *             passes the paused filter: a request paused in its headers is not sent upstream.
 *             resume() from inside a hook only affects that hook (its PAUSE reads as CONTINUE);
 *             from a timer it resumes what that timer's filter paused; from a post callback,
 *             whatever is paused.
 *   ERROR     the filter failed (ABI 1.2): the host applies the filter entry's `failure_mode`:
 *             `open` counts the error and goes on as with CONTINUE; `closed` (the default)
 *             answers 500 (request hooks, and response hooks before a byte went downstream) or
 *             resets the downstream connection. The SDK returns it when a hook throws.
 *
 * A local reply sent during a hook wins over the status the hook returns (it is read as STOP).
 * Any other value is read as ERROR. Hooks of a direction never run again after it stopped; a
 * local reply's headers still pass every filter's on_response_headers once (not the body
 * hooks). A local reply from a filter keeps the downstream connection when the request was read
 * completely, or at most 64 KiB of a Content-Length body is left (read and discarded).
 * The precise run-time rules: core/proxy/filter_manager.h. */
typedef uint32_t sluice_filter_status;
#define SLUICE_FILTER_CONTINUE 0u
#define SLUICE_FILTER_STOP 1u
#define SLUICE_FILTER_PAUSE 2u
#define SLUICE_FILTER_ERROR 3u

/* Which header map an accessor works on. */
typedef uint32_t sluice_header_map;
#define SLUICE_HEADERS_REQUEST 0u  /* request headers, as they will be sent upstream */
#define SLUICE_HEADERS_RESPONSE 1u /* response headers, as they will be sent downstream */

/* A header field name interned by the host (sluice_filter_host_api.header_name, ABI 1.4):
 * opaque, owned by the host, valid until the process exits. */
typedef struct sluice_header_name sluice_header_name;

/* ---- Types of ABI 1.2 ---- */

/* Which body a body call works on (same values as sluice_header_map). */
typedef uint32_t sluice_body_dir;
#define SLUICE_BODY_REQUEST 0u
#define SLUICE_BODY_RESPONSE 1u

/* One header field for send_local_reply_headers (borrowed for the call). */
typedef struct sluice_header_field {
  sluice_str name;
  sluice_str value;
} sluice_header_field;

/* Facts about a request, read with attribute(). Explicit numeric values: never reorder. Every
 * value is a borrowed string valid until the stream ends; {NULL, 0} when the fact does not exist
 * for this request (e.g. TLS facts on a plain connection, the cluster of a request no route
 * matched). */
typedef uint32_t sluice_attribute;
#define SLUICE_ATTR_ROUTE_NAME 1u        /* the matched route's `name` (or its prefix when unnamed;
                                          * "/<cluster>" under context-path routing, where the
                                          * first path segment names the cluster) */
#define SLUICE_ATTR_CLUSTER_NAME 2u      /* the route's target cluster (as routed: a request
                                          * to a cluster that does not exist gets 404 after the
                                          * request filters) */
#define SLUICE_ATTR_LISTENER_NAME 3u     /* the listener the request came in on */
#define SLUICE_ATTR_REQUEST_ID 4u        /* X-Request-Id as it will go upstream (after the filters
                                          * before this one); absent when there is none */
#define SLUICE_ATTR_TLS_SNI 5u           /* server name the client sent (RFC 6066 §3) */
#define SLUICE_ATTR_TLS_VERSION 6u       /* "TLSv1.2", "TLSv1.3" */
#define SLUICE_ATTR_TLS_PEER_SUBJECT 7u  /* verified client certificate's subject, RFC 2253 form;
                                          * absent without a verified client certificate */
#define SLUICE_ATTR_UPSTREAM_PATH 8u     /* path plus query as it will be sent upstream (after the
                                          * route's context path / prefix rewrite) */
#define SLUICE_ATTR_PROTOCOL 9u          /* "HTTP/1.0" or "HTTP/1.1" */

/* Clocks for start_time_us. */
typedef uint32_t sluice_clock;
#define SLUICE_CLOCK_MONOTONIC 0u /* same clock as sluice_host_api.now_us */
#define SLUICE_CLOCK_REALTIME 1u  /* microseconds since the Unix epoch */

/* Runs on the stream's worker thread when a timer fires. `stream` is the stream that armed it
 * (alive: the host cancels a stream's timers when it ends); `id` is what timer_arm returned. */
typedef void (*sluice_timer_fn)(void* arg, sluice_stream* stream, uint64_t id);

/* A stream's name for post() from other threads: a number, never a pointer, so holding one
 * after the stream ended is harmless. 0 is never a valid reference. */
typedef uint64_t sluice_stream_ref;

/* Runs on the stream's worker thread, exactly once per successful post(). `stream` is the live
 * stream, or NULL when it ended before the callback could run (free `arg` then; do not touch any
 * per-request object). */
typedef void (*sluice_post_fn)(void* arg, sluice_stream* stream);

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
   * SLUICE_FILTER_STOP; or call it while paused, instead of resume(). From a response hook it
   * replaces the upstream's response (see SLUICE_FILTER_STOP). The downstream connection stays
   * open for the next request when the request was read completely (or its rest can be read and
   * discarded); otherwise the reply carries Connection: close. */
  void (*send_local_reply)(sluice_stream* stream, uint32_t status, sluice_str content_type,
                           sluice_str body);
  /* Continue a chain the filter paused (SLUICE_FILTER_PAUSE) with the next filter. Called
   * during the hook that is about to return PAUSE, the chain goes on as soon as it returns.
   * Ignored when the stream is not paused by this filter. */
  void (*resume)(sluice_stream* stream);
  /* Index of the worker running this stream (0-based). */
  uint32_t (*worker_index)(const sluice_stream* stream);

  /* ---- ABI 1.2: read a field only when struct_size covers it (hosts 1.0/1.1 lack them). ---- */

  /* Timers. Arms a one-shot timer on the stream's worker: fn(arg, stream, id) runs on that thread
   * after `delay_ms` (0 = on the next event-loop turn). Returns a timer id (> 0), or 0 when the
   * stream is ending. The host cancels every timer of a stream when the stream ends (fn is then
   * never called, so `arg` should be owned by the filter's per-request state). Worker thread. */
  uint64_t (*timer_arm)(sluice_stream* stream, uint64_t delay_ms, sluice_timer_fn fn, void* arg);
  /* Cancels timer `id` of this stream. Returns 1 when it was pending, 0 when it already ran, was
   * cancelled or never existed. Worker thread. */
  int (*timer_cancel)(sluice_stream* stream, uint64_t id);

  /* Coming back to the worker from another thread (an asynchronous lookup, a client library's
   * own thread). stream_ref: worker thread; the reference stays harmless forever. */
  sluice_stream_ref (*stream_ref)(const sluice_stream* stream);
  /* Any thread. Queues fn(arg, stream) to run on the worker that owns `ref`; the host checks
   * there whether the stream is still alive and passes NULL when it is not. Returns 0 (fn will be
   * called exactly once), or -1 when `ref` names no worker of this process or the worker is gone
   * (fn is never called; the caller keeps `arg`). */
  int (*post)(sluice_stream_ref ref, sluice_post_fn fn, void* arg);

  /* The request context: a string-keyed store shared by every filter of one request (request
   * id, consumer name, auth claims), readable in the access log as %{ctx.KEY} and in the JSON
   * line under "ctx". Keys: 1..64 bytes of [A-Za-z0-9_.-]; values: any bytes up to 4096; at most
   * 64 keys per request. Well-known keys (docs/writing-a-filter.md): "consumer" (the caller an
   * auth filter identified), "auth.method", "jwt.<claim>". Worker thread.
   * Sets (copies) `value` under `key`, replacing an earlier value. Returns 0, or -1 when the key
   * or value is invalid or the store is full (nothing changed). */
  int (*context_set)(sluice_stream* stream, sluice_str key, sluice_str value);
  /* The value under `key`, or {NULL, 0} when absent. Borrowed until the next context_set of the
   * same key or the end of the stream. */
  sluice_str (*context_get)(const sluice_stream* stream, sluice_str key);

  /* A fact about the request (see sluice_attribute); {NULL, 0} when absent or unknown. */
  sluice_str (*attribute)(const sluice_stream* stream, sluice_attribute attr);
  /* When the request head arrived, in microseconds of `clock`. */
  uint64_t (*start_time_us)(const sluice_stream* stream, sluice_clock clock);

  /* Bodies. From on_request_headers (SLUICE_BODY_REQUEST) or on_response_headers
   * (SLUICE_BODY_RESPONSE): asks the host to collect that body, up to `max_bytes`, before this
   * filter's body hook sees it. The hook is then called once, with the whole body and
   * end_stream 1 (not at all for a message without a body), and the message does not pass this
   * filter before that: a buffered request is not sent upstream (its headers neither) until the
   * whole body went through the filter; a buffered response's headers wait likewise. A body over
   * `max_bytes` ends the request with `over_limit_status` (0: 413 for a request, 502 for a
   * response). Returns 0, or -1 when called from another hook (or from on_response_headers of a
   * local reply, whose body does not pass the body hooks). */
  int (*buffer_body)(sluice_stream* stream, sluice_body_dir dir, uint64_t max_bytes,
                     uint32_t over_limit_status);
  /* From the body hook that received a whole buffered body (see buffer_body): replaces that body
   * by `data` (copied) for the rest of the chain, upstream or downstream; the host sets
   * Content-Length to match (chunked framing is dropped). Returns 0, or -1 when the body was not
   * buffered for this filter or the hook is not that call. */
  int (*body_replace)(sluice_stream* stream, sluice_body_dir dir, sluice_str data);

  /* send_local_reply with extra response header fields (copied), e.g. WWW-Authenticate,
   * Retry-After, RateLimit-*. Fields with invalid syntax (RFC 9110 §5.1, §5.5) and framing or
   * hop-by-hop fields (Content-Length, Transfer-Encoding, Connection, ...) are dropped and
   * logged. Same rules as send_local_reply otherwise. */
  void (*send_local_reply_headers)(sluice_stream* stream, uint32_t status, sluice_str content_type,
                                   sluice_str body, const sluice_header_field* headers,
                                   size_t header_count);

  /* Replaces the path and query the request is sent upstream with (origin-form, RFC 9112
   * §3.2.1: starts with '/', only characters valid in a request-target, at most 8192 bytes),
   * e.g. to drop a credential from the query string. Routing is not redone; the access log keeps
   * the client's target; SLUICE_ATTR_UPSTREAM_PATH reads the new value. From on_request_headers
   * (or while paused there) only. Returns 0, or -1 when the path is invalid or the request head
   * has already gone upstream. */
  int (*set_upstream_path)(sluice_stream* stream, sluice_str path);

  /* ---- ABI 1.4: read a field only when struct_size covers it (hosts 1.0..1.3 lack them). ----
   *
   * Header names resolved once. header_name interns a name and returns a handle; the *_named
   * calls take the handle where header_get/set/add/remove take the name, and do what those do
   * (same arguments otherwise, same results), without looking the name up and checking it on
   * every call. Resolve each name a filter uses once, in config_create or worker_create, and
   * keep the handle. */

  /* Interns header field name `name` (copied; a token, RFC 9110 §5.1, 1..256 bytes) and returns
   * its handle, or NULL when `name` is not a valid field name. The handle is valid for every
   * stream on every thread until the process exits (the host never frees it, so a handle kept
   * across a reload or by another config instance stays valid). The same bytes give the same
   * handle; two spellings of one name (X-Api-Key, x-api-key) give two handles that match the
   * same fields (names compare case-insensitively) and add or set the field with their own
   * spelling. Any thread; takes a lock: not for the per-request path. */
  const sluice_header_name* (*header_name)(sluice_str name);
  /* header_get by handle: the `index`-th (0-based) field called `name`, or {NULL, 0} when there
   * is none or `name` is NULL. Borrowed like header_get's result. */
  sluice_str (*header_get_named)(const sluice_stream* stream, sluice_header_map map,
                                 const sluice_header_name* name, size_t index);
  /* header_set by handle: replaces every field called `name` by one with `value` (appends it
   * when absent). Returns 0, or -1 when `value` is not a valid field value (RFC 9110 §5.5) or
   * `name` is NULL: the header map is then unchanged. */
  int (*header_set_named)(sluice_stream* stream, sluice_header_map map,
                          const sluice_header_name* name, sluice_str value);
  /* header_add by handle: appends one field. Same return values as header_set_named. */
  int (*header_add_named)(sluice_stream* stream, sluice_header_map map,
                          const sluice_header_name* name, sluice_str value);
  /* header_remove by handle: removes every field called `name`; returns how many (0 when `name`
   * is NULL). */
  size_t (*header_remove_named)(sluice_stream* stream, sluice_header_map map,
                                const sluice_header_name* name);
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

  /* Worker thread `worker_index`. One per worker per config instance. NULL means failure: logged,
   * then the entry's failure_mode applies to every request through it (`closed`: 500; `open`:
   * the filter is skipped). */
  void* (*worker_create)(void* config, uint32_t worker_index);
  /* Worker thread. */
  void (*worker_destroy)(void* worker);

  /* Worker thread, at request start. Optional: when NULL, hooks get the worker instance as
   * `self`. Otherwise the returned pointer is `self` (NULL means failure, handled by the entry's
   * failure_mode as for worker_create). */
  void* (*stream_create)(void* worker, sluice_stream* stream);
  /* Worker thread, after on_log. Optional. */
  void (*stream_destroy)(void* self);

  /* Request headers complete (hop-by-hop fields already removed, X-Forwarded-* added: the headers
   * as they will go upstream). The route is matched before the chain runs (by path, which
   * filters cannot change), so its name and cluster are attributes here and a route may have a
   * chain of its own (routes[].filters); the request goes upstream after the last filter.
   * `end_stream` is 1 when the request has no body. Any status. Optional (NULL = CONTINUE). */
  sluice_filter_status (*on_request_headers)(void* self, sluice_stream* stream, int end_stream);
  /* A piece of request body (read-only, borrowed for the call), or the whole body once when the
   * filter asked for buffer_body. `end_stream` 1 on the last one (possibly with len 0). Any
   * status. Optional. */
  sluice_filter_status (*on_request_body)(void* self, sluice_stream* stream, const char* data,
                                          size_t len, int end_stream);
  /* Response headers from upstream (or of a local reply), before they go downstream; response
   * filters run in reverse chain order. May change them; STOP replaces the response by the local
   * reply the filter sent (a local reply's own headers pass the response hooks once, and a local
   * reply sent from there is not filtered again). Any status. Optional. */
  sluice_filter_status (*on_response_headers)(void* self, sluice_stream* stream, int end_stream);
  /* A piece of response body (read-only), or the whole body once after buffer_body. Any status
   * (STOP and ERROR reset the downstream connection when bytes have already gone out).
   * Optional. */
  sluice_filter_status (*on_response_body)(void* self, sluice_stream* stream, const char* data,
                                           size_t len, int end_stream);
  /* The request ended (completed, reset or failed); always called once per stream_create.
   * Optional. Access log, metrics. */
  void (*on_log)(void* self, const sluice_stream* stream);

  /* ---- ABI 1.3: read only when struct_size covers it (older plugins: NULL). ---- */

  /* Main thread, once per config instance, right after its config_create succeeded: the hooks
   * of this table that streams through `config` never need, as SLUICE_HOOK_* bits (e.g. a
   * response hook that does nothing with this config's settings). The host then does not call
   * them for those streams; other bits are ignored. Optional (NULL = 0: every hook is called). */
  uint32_t (*unused_hooks)(const void* config);
} sluice_filter_plugin;

/* Bits of sluice_filter_plugin.unused_hooks (ABI 1.3). */
#define SLUICE_HOOK_REQUEST_HEADERS (1u << 0)
#define SLUICE_HOOK_REQUEST_BODY (1u << 1)
#define SLUICE_HOOK_RESPONSE_HEADERS (1u << 2)
#define SLUICE_HOOK_RESPONSE_BODY (1u << 3)
#define SLUICE_HOOK_LOG (1u << 4)

#ifdef __cplusplus
}
#endif
