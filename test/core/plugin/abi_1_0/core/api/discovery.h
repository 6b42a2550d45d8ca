/*
 * sluice plugin C ABI — service discovery.
 *
 * A discovery plugin learns endpoint lists from somewhere (ZooKeeper, a file, DNS) and publishes
 * them to the host as full snapshots: every cluster this discovery instance knows, each with its
 * complete endpoint list. The host diffs snapshots, creates clusters for new names from the
 * entry's `cluster_defaults`, and posts the new host sets to every worker.
 *
 * Lifetimes: plugin .so → config instance (config_create/config_destroy, main thread) → started
 * (start/stop, main thread). Between start and stop the plugin may run its own threads and call
 * publish() from any of them.
 */
#pragma once

#include "core/api/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One discovered endpoint. */
typedef struct sluice_endpoint {
  sluice_str address; /* "host:port"; the host resolves names once when the snapshot arrives */
  uint32_t weight;    /* 0 means "default" (1) */
  sluice_str zone;    /* may be empty */
  const sluice_str* metadata; /* key/value pairs, flattened: [k0, v0, k1, v1, ...] */
  size_t metadata_count;      /* number of pairs */
} sluice_endpoint;

/* One cluster's complete endpoint list. */
typedef struct sluice_discovered_cluster {
  sluice_str name;
  const sluice_endpoint* endpoints;
  size_t endpoint_count;
} sluice_discovered_cluster;

/* A full snapshot. Everything is borrowed for the publish call: the host copies what it keeps. */
typedef struct sluice_discovery_snapshot {
  const sluice_discovered_cluster* clusters;
  size_t cluster_count;
} sluice_discovery_snapshot;

/* Opaque: where a discovery instance publishes. Valid from start until stop returns. */
typedef struct sluice_discovery_sink sluice_discovery_sink;

/* Host callbacks for discovery (sluice_host_api.discovery). */
typedef struct sluice_discovery_host_api {
  uint32_t struct_size;
  /* Publish a full snapshot. Thread-safe; may be called from any thread between start and stop.
   * A cluster missing from the snapshot is gone. Returns 0, or -1 if the snapshot was refused
   * (the reason is logged). */
  int (*publish)(sluice_discovery_sink* sink, const sluice_discovery_snapshot* snapshot);
} sluice_discovery_host_api;

/* The discovery plugin's table (sluice_plugin_descriptor.hooks). */
typedef struct sluice_discovery_plugin {
  uint32_t struct_size;
  /* Main thread. Validate the YAML `config` subtree; NULL plus `err` to refuse. */
  void* (*config_create)(const sluice_host_api* host, const sluice_config_node* cfg,
                         sluice_error* err);
  /* Main thread, after stop. */
  void (*config_destroy)(void* config);
  /* Main thread. Begin watching; publish through `sink`. Returns 0, or -1 after logging why. */
  int (*start)(void* config, sluice_discovery_sink* sink);
  /* Main thread. Stop watching; no publish() may run after stop returns. */
  void (*stop)(void* config);
} sluice_discovery_plugin;

#ifdef __cplusplus
}
#endif
