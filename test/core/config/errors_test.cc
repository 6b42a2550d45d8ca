// Invalid configs: each problem is reported as "file:line:col: reason", and all of them are.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::kListener;
using testing::loadErrors;

std::string withListener(const std::string& rest) { return std::string(kListener) + rest; }

TEST(ConfigErrors, YamlSyntaxErrorHasLineAndColumn) {
  auto errors = loadErrors("listeners:\n  - name: [a,\n    address: b\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(hasError(errors, "4:1", "end of sequence flow not found"));
}

TEST(ConfigErrors, TabIndentationIsASyntaxError) {
  auto errors = loadErrors("workers: 2\n\tlisteners: []\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("t.yaml:2:", 0), 0u) << errors[0];
}

// yaml-cpp 0.7 reads a leading ',' as an empty document, and its LoadAll loops forever on it
// (jbeder/yaml-cpp#1040); the loader must report it and return.
TEST(ConfigErrors, StrayCommaIsReportedNotIgnored) {
  auto errors = loadErrors(std::string(",") + kListener);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(hasError(errors, "1:1", "unexpected ','"));
}

TEST(ConfigErrors, UnknownKeysNameTheKeyAndTheAllowedOnes) {
  auto errors =
      loadErrors(withListener("wrokers: 2\n"
                              "limits: {max_body: 1}\n"
                              "clusters:\n"
                              "  - name: a\n"
                              "    endpoint: [h:1]\n"
                              "    hash_key: {ip: true}\n"
                              "discovery:\n"
                              "  - name: zk\n"
                              "    cluster_defaults: {name: x}\n"));
  EXPECT_TRUE(
      hasError(errors, "2:1", "unknown key 'wrokers' in top-level config (allowed: workers,"));
  EXPECT_TRUE(hasError(errors, "3:10", "limits: unknown key 'max_body'"));
  EXPECT_TRUE(hasError(errors, "6:5",
                       "clusters[0]: unknown key 'endpoint' in cluster (allowed: "
                       "name, endpoints, balancer,"));
  EXPECT_TRUE(hasError(errors, "7:16",
                       "unknown key 'ip' in hash_key (allowed: header, cookie, "
                       "query, client_ip, path)"));
  EXPECT_TRUE(hasError(errors, "10:24", "unknown key 'name' in cluster_defaults"));
  EXPECT_EQ(errors.size(), 5u);
}

TEST(ConfigErrors, PluginConfigIsNotInspected) {
  auto errors = loadErrors(
      withListener("clusters:\n"
                   "  - name: a\n"
                   "    balancer: {name: rr, config: {anything: [goes, here]}, extra: 1}\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(hasError(errors, "4:60",
                       "unknown key 'extra' in balancer (allowed: name, path, "
                       "config)"));
}

TEST(ConfigErrors, DuplicateKey) {
  auto errors = loadErrors(withListener("workers: 2\nworkers: 3\n"));
  EXPECT_TRUE(hasError(errors, "3:1", "duplicate key 'workers'"));
}

TEST(ConfigErrors, WrongTypes) {
  auto errors = loadErrors(
      "workers: lots\n"
      "drain_timeout_ms: '100'\n"
      "limits: {max_header_count: -1, max_request_body_bytes: 1.5}\n"
      "admin: [127.0.0.1:9901]\n"
      "plugin_paths: /usr/lib\n"
      "listeners:\n"
      "  - name: [edge]\n"
      "    address: 127.0.0.1:8080\n"
      "clusters:\n"
      "  - name: a\n"
      "    hash_key: {client_ip: yes please}\n"
      "    endpoints: [[h, 1]]\n");
  EXPECT_TRUE(
      hasError(errors, "1:10", "workers: expected 'auto' or an integer 1..256, got 'lots'"));
  EXPECT_TRUE(hasError(errors, "2:19", "drain_timeout_ms: expected a timeout in milliseconds"));
  EXPECT_TRUE(hasError(errors, "3:28",
                       "limits.max_header_count: expected an integer 1..4294967295, "
                       "got '-1'"));
  EXPECT_TRUE(hasError(errors, "3:56", "limits.max_request_body_bytes: expected an integer"));
  EXPECT_TRUE(hasError(errors, "4:8", "admin: expected a mapping (admin), got a list"));
  EXPECT_TRUE(hasError(errors, "5:15", "plugin_paths: expected a list, got '/usr/lib'"));
  EXPECT_TRUE(hasError(errors, "7:11", "listeners[0].name: expected a string, got a list"));
  EXPECT_TRUE(hasError(errors, "11:27", "clusters[0].hash_key.client_ip: expected true or false"));
  EXPECT_TRUE(hasError(errors, "12:17",
                       "clusters[0].endpoints[0]: expected \"host:port\" or a "
                       "mapping {address, weight}, got a list"));
  EXPECT_EQ(errors.size(), 9u);
}

TEST(ConfigErrors, WorkersRange) {
  EXPECT_TRUE(hasError(loadErrors(withListener("workers: 0\n")), "2:10", "1..256, got '0'"));
  EXPECT_TRUE(hasError(loadErrors(withListener("workers: 257\n")), "2:10", "1..256, got '257'"));
}

TEST(ConfigErrors, InvalidAddresses) {
  auto errors = loadErrors(
      "admin: {address: localhost}\n"
      "listeners:\n"
      "  - {name: a, address: '127.0.0.1:0'}\n"
      "  - {name: b, address: '::1:8080'}\n"
      "  - {name: c, address: '[::1]'}\n"
      "  - {name: d, address: '300.1.2.3:80'}\n"
      "  - {name: e, address: 'h:65536'}\n"
      "  - {name: f, address: ':80'}\n"
      "  - {name: g, address: '[::1]:8080'}\n");
  EXPECT_TRUE(hasError(errors, "1:18", "admin.address: invalid address 'localhost': missing port"));
  EXPECT_TRUE(hasError(errors, "3:24", "invalid port '0' (expected 1..65535)"));
  EXPECT_TRUE(hasError(errors, "4:24", "IPv6 addresses must be written in brackets"));
  EXPECT_TRUE(hasError(errors, "5:24", "missing port (expected [ipv6]:port)"));
  EXPECT_TRUE(hasError(errors, "6:24", "invalid IPv4 address '300.1.2.3'"));
  EXPECT_TRUE(hasError(errors, "7:24", "invalid port '65536'"));
  EXPECT_TRUE(hasError(errors, "8:24", "missing host"));
  EXPECT_EQ(errors.size(), 7u);  // [::1]:8080 is fine
}

TEST(ConfigErrors, ListenerNamesAndAddressesUnique) {
  auto errors = loadErrors(
      "listeners:\n"
      "  - {name: edge, address: 127.0.0.1:8080}\n"
      "  - {name: edge, address: 127.0.0.1:8081}\n"
      "  - {name: other, address: 127.0.0.1:8080}\n");
  EXPECT_TRUE(hasError(errors, "3:12",
                       "listeners[1]: duplicate listener name 'edge' (first at "
                       "t.yaml:2:12)"));
  EXPECT_TRUE(hasError(errors, "4:28",
                       "listeners[2]: duplicate listener address '127.0.0.1:8080' "
                       "(first at t.yaml:2:27)"));
  EXPECT_EQ(errors.size(), 2u);
}

TEST(ConfigErrors, ListenerAddressesMustNotOverlap) {
  auto errors = loadErrors(
      "listeners:\n"
      "  - {name: any, address: 0.0.0.0:8080}\n"
      "  - {name: lo, address: 127.0.0.1:8080}\n"
      "  - {name: other, address: 127.0.0.1:8081}\n"
      "  - {name: v6, address: '[::]:8081'}\n");
  EXPECT_TRUE(hasError(errors, "3:25",
                       "listeners[1].address: '127.0.0.1:8080' overlaps listener address "
                       "'0.0.0.0:8080' (at t.yaml:2:26)"));
  EXPECT_TRUE(hasError(errors, "5:25",
                       "listeners[3].address: '[::]:8081' overlaps listener address "
                       "'127.0.0.1:8081' (at t.yaml:4:28)"));
  EXPECT_EQ(errors.size(), 2u);
}

TEST(ConfigErrors, ListenerAddressMustNotBeTheAdminAddress) {
  auto errors = loadErrors(
      "admin: {address: 127.0.0.1:9901}\n"
      "listeners:\n"
      "  - {name: a, address: 127.0.0.1:9901}\n"
      "  - {name: b, address: 0.0.0.0:9901}\n"
      "  - {name: c, address: 127.0.0.1:9902}\n"
      "  - {name: d, address: 127.0.0.2:9901}\n");
  EXPECT_TRUE(hasError(errors, "3:24",
                       "listeners[0].address: '127.0.0.1:9901' is taken by the admin listener "
                       "(admin.address '127.0.0.1:9901' at t.yaml:1:18)"));
  EXPECT_TRUE(hasError(errors, "4:24", "listeners[1].address: '0.0.0.0:9901' is taken by"));
  // The wildcard b also overlaps a, and d (another host) overlaps b.
  EXPECT_TRUE(hasError(errors, "4:24", "overlaps listener address '127.0.0.1:9901'"));
  EXPECT_TRUE(hasError(errors, "6:24",
                       "listeners[3].address: '127.0.0.2:9901' overlaps listener address "
                       "'0.0.0.0:9901'"));
  EXPECT_EQ(errors.size(), 4u);
}

TEST(ConfigErrors, AtLeastOneListener) {
  EXPECT_TRUE(hasError(loadErrors("listeners: []\n"), "1:12", "at least one listener"));
  EXPECT_TRUE(hasError(loadErrors("workers: 2\n"), "1:1", "at least one listener"));
  EXPECT_TRUE(hasError(loadErrors(""), "1:1", "at least one listener"));
}

TEST(ConfigErrors, MissingRequiredKeys) {
  auto errors = loadErrors(
      "listeners:\n"
      "  - address: 127.0.0.1:80\n"
      "routes:\n"
      "  - prefix: /\n"
      "clusters:\n"
      "  - endpoints: [{weight: 2}]\n");
  EXPECT_TRUE(hasError(errors, "2:5", "listeners[0]: missing required key 'name'"));
  EXPECT_TRUE(hasError(errors, "4:5", "routes[0]: missing required key 'cluster'"));
  EXPECT_TRUE(hasError(errors, "6:5", "clusters[0]: missing required key 'name'"));
  EXPECT_TRUE(hasError(errors, "6:17", "clusters[0].endpoints[0]: missing required key 'address'"));
}

TEST(ConfigErrors, ClusterNames) {
  auto errors =
      loadErrors(withListener("clusters:\n"
                              "  - name: 'rest api'\n"
                              "  - name: ''\n"
                              "  - name: ok.name_1-x\n"
                              "  - name: ok.name_1-x\n"));
  EXPECT_TRUE(hasError(errors, "3:11",
                       "clusters[0].name: invalid name 'rest api' (expected "
                       "letters, digits, '.', '_' or '-')"));
  EXPECT_TRUE(hasError(errors, "4:11", "clusters[1].name: invalid name ''"));
  EXPECT_TRUE(hasError(errors, "6:11",
                       "clusters[3]: duplicate cluster name 'ok.name_1-x' (first "
                       "at t.yaml:5:11)"));
  EXPECT_EQ(errors.size(), 3u);
}

TEST(ConfigErrors, RoutePrefixAndRewrite) {
  auto errors =
      loadErrors(withListener("clusters: [{name: a}]\n"
                              "routes:\n"
                              "  - {prefix: api, cluster: a}\n"
                              "  - {prefix: /x, cluster: a, prefix_rewrite: y}\n"
                              "  - {prefix: /x, cluster: a}\n"));
  EXPECT_TRUE(hasError(errors, "4:14", "routes[0].prefix: must start with '/', got 'api'"));
  EXPECT_TRUE(
      hasError(errors, "5:46", "routes[1].prefix_rewrite: must be empty or start with '/'"));
  EXPECT_TRUE(hasError(errors, "6:14",
                       "routes[2]: duplicate route prefix '/x' (first at "
                       "t.yaml:5:14)"));
  EXPECT_EQ(errors.size(), 3u);
}

TEST(ConfigErrors, RouteToUnknownClusterWithoutDiscovery) {
  auto errors =
      loadErrors(withListener("clusters: [{name: a}]\n"
                              "routes:\n"
                              "  - prefix: /legacy/\n"
                              "    cluster: legacy\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(hasError(errors, "5:14",
                       "routes[0].cluster: unknown cluster 'legacy' (not in "
                       "clusters, and no discovery is configured"));
}

TEST(ConfigErrors, RouteToUnknownClusterIsFineWithDiscovery) {
  std::vector<std::string> errors;
  auto config = loadString(withListener("routes: [{prefix: /legacy/, cluster: legacy}]\n"
                                        "discovery: [{name: zookeeper}]\n"),
                           "t.yaml", &errors);
  EXPECT_NE(config, nullptr) << (errors.empty() ? "" : errors[0]);
}

TEST(ConfigErrors, Weights) {
  auto errors =
      loadErrors(withListener("clusters:\n"
                              "  - name: a\n"
                              "    endpoints:\n"
                              "      - {address: h:1, weight: 0}\n"
                              "      - {address: h:2, weight: 10001}\n"
                              "      - {address: h:3, weight: 10000}\n"
                              "      - h:3\n"));
  EXPECT_TRUE(hasError(errors, "5:32",
                       "clusters[0].endpoints[0].weight: expected an integer "
                       "1..10000, got '0'"));
  EXPECT_TRUE(hasError(errors, "6:32", "got '10001'"));
  EXPECT_TRUE(hasError(errors, "8:9", "clusters[0].endpoints[3]: duplicate endpoint 'h:3'"));
  EXPECT_EQ(errors.size(), 3u);
}

TEST(ConfigErrors, TimeoutsMustBePositive) {
  auto errors = loadErrors(withListener(
      "drain_timeout_ms: 0\n"
      "limits: {request_header_timeout_ms: 0, idle_timeout_ms: 0}\n"
      "clusters:\n"
      "  - {name: a, connect_timeout_ms: 0, response_timeout_ms: 0, idle_timeout_ms: 0}\n"
      "discovery:\n"
      "  - {name: zk, cluster_defaults: {connect_timeout_ms: 0}}\n"));
  EXPECT_TRUE(hasError(errors, "2:19",
                       "drain_timeout_ms: expected a timeout in milliseconds "
                       "(an integer 1..4294967295), got '0'"));
  EXPECT_TRUE(hasError(errors, "3:37", "limits.request_header_timeout_ms"));
  EXPECT_TRUE(hasError(errors, "3:57", "limits.idle_timeout_ms"));
  EXPECT_TRUE(hasError(errors, "5:35", "clusters[0].connect_timeout_ms"));
  EXPECT_TRUE(hasError(errors, "5:59", "clusters[0].response_timeout_ms"));
  EXPECT_TRUE(hasError(errors, "5:79", "clusters[0].idle_timeout_ms"));
  EXPECT_TRUE(hasError(errors, "7:55", "discovery[0].cluster_defaults.connect_timeout_ms"));
  EXPECT_EQ(errors.size(), 7u);
}

TEST(ConfigErrors, HashKeyTakesExactlyOneSource) {
  auto errors =
      loadErrors(withListener("clusters:\n"
                              "  - {name: a, hash_key: {header: X-A, cookie: s}}\n"
                              "  - {name: b, hash_key: {path: false}}\n"
                              "  - {name: c, hash_key: {}}\n"
                              "  - {name: d, hash_key: {query: ''}}\n"));
  EXPECT_TRUE(hasError(errors, "3:47",
                       "clusters[0].hash_key: takes exactly one source, got "
                       "'header' and 'cookie'"));
  EXPECT_TRUE(hasError(errors, "4:32", "clusters[1].hash_key.path: must be true"));
  EXPECT_TRUE(hasError(errors, "5:25",
                       "clusters[2].hash_key: expected one of header, cookie, "
                       "query, client_ip, path"));
  EXPECT_TRUE(hasError(errors, "6:33", "clusters[3].hash_key.query: empty name"));
  EXPECT_EQ(errors.size(), 4u);
}

TEST(ConfigErrors, PluginRefs) {
  auto errors = loadErrors(
      "listeners:\n"
      "  - name: e\n"
      "    address: h:1\n"
      "    filters:\n"
      "      - {config: {a: 1}}\n"
      "      - [request_id]\n"
      "      - 'bad name'\n"
      "      - {name: x, path: ''}\n");
  EXPECT_TRUE(hasError(errors, "5:9", "listeners[0].filters[0]: missing required key 'name'"));
  EXPECT_TRUE(hasError(errors, "6:9",
                       "listeners[0].filters[1]: expected a filter plugin name or "
                       "a mapping {name, path, config, failure_mode}, got a list"));
  EXPECT_TRUE(hasError(errors, "7:9", "listeners[0].filters[2]: invalid name 'bad name'"));
  EXPECT_TRUE(hasError(errors, "8:25", "listeners[0].filters[3].path: empty path"));
  EXPECT_EQ(errors.size(), 4u);
}

TEST(ConfigErrors, ContextPathCharacters) {
  auto errors = loadErrors("listeners: [{name: e, address: 'h:1', context_path: '/a?b'}]\n");
  EXPECT_TRUE(hasError(errors, "1:53", "listeners[0].context_path: invalid character in '/a?b'"));
}

TEST(ConfigErrors, ManyProblemsAreAllReported) {
  auto errors = loadErrors(
      "workers: -3\n"
      "listeners:\n"
      "  - {name: edge, address: nowhere}\n"
      "  - {name: edge, address: 'h:1', colour: red}\n"
      "routes: [{prefix: x, cluster: missing}]\n"
      "clusters: [{name: a, retries: 99}]\n");
  EXPECT_TRUE(hasError(errors, "1:10", "workers"));
  EXPECT_TRUE(hasError(errors, "3:27", "invalid address 'nowhere'"));
  EXPECT_TRUE(hasError(errors, "4:34", "unknown key 'colour'"));
  EXPECT_TRUE(hasError(errors, "4:12", "duplicate listener name 'edge'"));
  EXPECT_TRUE(hasError(errors, "5:19", "must start with '/'"));
  EXPECT_TRUE(hasError(errors, "5:31", "unknown cluster 'missing'"));
  EXPECT_TRUE(hasError(errors, "6:31", "clusters[0].retries: expected an integer 0..10"));
  ASSERT_EQ(errors.size(), 7u);
  // Reported in document order, whichever pass found them.
  EXPECT_EQ(errors[2].rfind("t.yaml:4:12: ", 0), 0u) << errors[2];
  EXPECT_EQ(errors[3].rfind("t.yaml:4:34: ", 0), 0u) << errors[3];
}

TEST(ConfigErrors, OnlyOneDocument) {
  auto errors = loadErrors(withListener("---\nworkers: 2\n"));
  EXPECT_TRUE(hasError(errors, "3:1", "only one YAML document"));
}

}  // namespace
}  // namespace sluice::config
