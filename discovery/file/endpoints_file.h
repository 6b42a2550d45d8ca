// The endpoints file of the `file` discovery plugin: parsing and validation, no I/O.
//
//   clusters:
//     restapi:
//       - 127.0.0.1:9001                                  # an address alone (weight 1)
//       - { address: 127.0.0.1:9002, weight: 5, zone: a, metadata: { version: v2 } }
//     billing: []                                          # a cluster with no endpoints (503)
//
// YAML or JSON (JSON is YAML). Strict, because a half-written or mistyped file must never reach
// the traffic: unknown keys, duplicate cluster names, duplicate addresses in one cluster, empty
// values (`clusters:` or `billing:` with nothing after them), bad addresses, names and weights
// are all errors. Every error carries a 1-based line and column in the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/sdk/discovery.h"

namespace sluice::discovery {

// One problem found in an endpoints file; line/column are 1-based (0 = unknown).
struct FileError {
  uint32_t line = 0;
  uint32_t column = 0;
  std::string message;

  // "FILE:LINE:COL: MESSAGE" (or "FILE: MESSAGE" without a position).
  std::string format(const std::string& file) const;
};

// What parseEndpoints() found: the clusters in file order, or the errors (all of them, in file
// order). When `errors` is non-empty, `clusters` must not be used (it may be partial).
struct ParsedEndpoints {
  std::vector<sdk::DiscoveredCluster> clusters;
  std::vector<FileError> errors;

  bool ok() const { return errors.empty(); }
  // Total endpoints over all clusters.
  size_t endpointCount() const;
};

// Parses the text of an endpoints file. Never throws.
ParsedEndpoints parseEndpoints(std::string_view text);

// Weights accepted in the file (the same range as static endpoints in the main config).
constexpr int64_t kMinWeight = 1;
constexpr int64_t kMaxWeight = 10000;

// True when `name` is a valid cluster name: 1..200 of [A-Za-z0-9._-].
bool isClusterName(std::string_view name);

// Checks a "host:port" address: IPv4 or a host name (letters, digits, '.', '-', '_'), or
// "[v6]:port"; port 1..65535. Nothing is resolved. On failure sets *error to a one-line reason.
bool checkAddress(std::string_view address, std::string* error);

}  // namespace sluice::discovery
