// The optional cache file: the last snapshot published from ZooKeeper, written to disk after
// each change, and read at start when ZooKeeper does not answer in time (initial_wait_ms), so a
// cold start during a ZooKeeper outage still serves. The file is an endpoints file of the `file`
// discovery plugin (docs/plugins.md), so it can also be fed to `discovery: [{name: file}]`:
//
//   # sluice zookeeper discovery cache: servers 127.0.0.1:2181, root /sluice, written ...
//   clusters:
//     restapi:
//       - {address: 10.0.0.1:8080, weight: 5, zone: a, metadata: {version: v2}}
//
// Written atomically (temp file in the same directory + rename): a crash never leaves half a
// file. Any thread (plain file I/O; the discovery calls it from its loop thread).
#pragma once

#include <string>
#include <vector>

#include "core/api/sdk/discovery.h"

namespace sluice::zookeeper {

// Writes `clusters` to `path` with `comment` as its first line. False with *error set.
bool writeCacheFile(const std::string& path, const std::vector<sdk::DiscoveredCluster>& clusters,
                    const std::string& comment, std::string* error);

// Reads a file written by writeCacheFile (or any endpoints file in that shape). False with
// *error set when it is missing or not of that shape; nothing is half-read.
bool readCacheFile(const std::string& path, std::vector<sdk::DiscoveredCluster>* out,
                   std::string* error);

}  // namespace sluice::zookeeper
