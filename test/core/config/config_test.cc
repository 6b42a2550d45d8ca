// Valid configs: every key lands in the right struct field, defaults, plugin references and
// path resolution.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::kListener;
using testing::loadOk;

const char* kFull = R"(workers: 4
admin: {address: 127.0.0.1:9901}
plugin_paths: [/opt/sluice/plugins, plugins]
limits:
  max_request_line_bytes: 4096
  max_header_bytes: 32768
  max_header_count: 50
  max_request_body_bytes: 10485760
  request_header_timeout_ms: 5000
  idle_timeout_ms: 30000
drain_timeout_ms: 2000
listeners:
  - name: edge
    address: 0.0.0.0:8080
    context_path: /gateway/
    filters:
      - request_id
      - name: rate_limit
        path: /opt/librate_limit.so
        config: {requests_per_second: 100, burst: 200}
  - name: v6
    address: "[::1]:8081"
routes:
  - prefix: /legacy/
    cluster: legacy
    prefix_rewrite: /
  - prefix: /api
    cluster: restapi
clusters:
  - name: restapi
    balancer: {name: least_active}
    endpoints: [127.0.0.1:9001, {address: backend.local:9002, weight: 3}]
    hash_key: {header: X-User}
    connect_timeout_ms: 250
    response_timeout_ms: 3000
    idle_timeout_ms: 9000
    max_idle_connections: 8
    retries: 2
  - name: legacy
    endpoints: [10.0.0.1:80]
discovery:
  - name: zookeeper
    config: {servers: 127.0.0.1:2181, root: /dubbo}
    cluster_defaults:
      balancer: random
      hash_key: {client_ip: true}
      connect_timeout_ms: 500
)";

TEST(ConfigLoad, FullConfigRoundTrips) {
  auto config = loadOk(kFull);
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->file, "t.yaml");
  EXPECT_EQ(config->workers, 4u);
  EXPECT_EQ(config->admin_address, "127.0.0.1:9901");
  ASSERT_EQ(config->plugin_paths.size(), 2u);
  EXPECT_EQ(config->plugin_paths[0], "/opt/sluice/plugins");
  EXPECT_EQ(config->limits.max_request_line_bytes, 4096u);
  EXPECT_EQ(config->limits.max_header_bytes, 32768u);
  EXPECT_EQ(config->limits.max_header_count, 50u);
  EXPECT_EQ(config->limits.max_request_body_bytes, 10485760u);
  EXPECT_EQ(config->limits.request_header_timeout_ms, 5000u);
  EXPECT_EQ(config->limits.idle_timeout_ms, 30000u);
  EXPECT_EQ(config->drain_timeout_ms, 2000u);

  ASSERT_EQ(config->listeners.size(), 2u);
  const Listener& edge = config->listeners[0];
  EXPECT_EQ(edge.name, "edge");
  EXPECT_EQ(edge.address, "0.0.0.0:8080");
  EXPECT_EQ(edge.context_path, "/gateway");
  EXPECT_EQ(edge.mark.str(), "t.yaml:13:5");
  ASSERT_EQ(edge.filters.size(), 2u);
  EXPECT_EQ(edge.filters[0].name, "request_id");
  EXPECT_TRUE(edge.filters[0].path.empty());
  EXPECT_TRUE(edge.filters[0].config.IsNull());
  EXPECT_EQ(edge.filters[0].mark.str(), "t.yaml:17:9");
  EXPECT_EQ(edge.filters[1].name, "rate_limit");
  EXPECT_EQ(edge.filters[1].path, "/opt/librate_limit.so");
  EXPECT_EQ(edge.filters[1].config["burst"].as<int>(), 200);
  EXPECT_EQ(edge.filters[1].mark.str(), "t.yaml:18:9");
  EXPECT_EQ(config->listeners[1].address, "[::1]:8081");
  EXPECT_EQ(config->listeners[1].context_path, "");

  ASSERT_EQ(config->routes.size(), 2u);
  EXPECT_EQ(config->routes[0].prefix, "/legacy/");
  EXPECT_EQ(config->routes[0].cluster, "legacy");
  EXPECT_EQ(config->routes[0].prefix_rewrite, "/");
  EXPECT_FALSE(config->routes[1].prefix_rewrite.has_value());

  ASSERT_EQ(config->clusters.size(), 2u);
  const Cluster& api = config->clusters[0];
  EXPECT_EQ(api.name, "restapi");
  EXPECT_EQ(api.balancer.name, "least_active");
  ASSERT_EQ(api.endpoints.size(), 2u);
  EXPECT_EQ(api.endpoints[0].address, "127.0.0.1:9001");
  EXPECT_EQ(api.endpoints[0].weight, 1u);
  EXPECT_EQ(api.endpoints[1].address, "backend.local:9002");
  EXPECT_EQ(api.endpoints[1].weight, 3u);
  EXPECT_EQ(api.hash_key.source, HashKey::Source::kHeader);
  EXPECT_EQ(api.hash_key.name, "X-User");
  EXPECT_EQ(api.connect_timeout_ms, 250u);
  EXPECT_EQ(api.response_timeout_ms, 3000u);
  EXPECT_EQ(api.idle_timeout_ms, 9000u);
  EXPECT_EQ(api.max_idle_connections, 8u);
  EXPECT_EQ(api.retry_policy.retries, 2u);

  ASSERT_EQ(config->discovery.size(), 1u);
  const Discovery& zk = config->discovery[0];
  EXPECT_EQ(zk.plugin.name, "zookeeper");
  EXPECT_EQ(zk.plugin.config["root"].as<std::string>(), "/dubbo");
  EXPECT_EQ(zk.mark.str(), "t.yaml:42:5");
  EXPECT_EQ(zk.cluster_defaults.balancer.name, "random");
  EXPECT_EQ(zk.cluster_defaults.hash_key.source, HashKey::Source::kClientIp);
  EXPECT_EQ(zk.cluster_defaults.connect_timeout_ms, 500u);
  EXPECT_EQ(zk.cluster_defaults.response_timeout_ms, 15000u);
}

TEST(ConfigLoad, DefaultsForAMinimalConfig) {
  auto config = loadOk(kListener);
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->workers, 0u);  // auto
  EXPECT_EQ(config->admin_address, "");
  EXPECT_TRUE(config->plugin_paths.empty());
  EXPECT_EQ(config->limits.max_request_line_bytes, 8192u);
  EXPECT_EQ(config->limits.max_header_bytes, 65536u);
  EXPECT_EQ(config->limits.max_header_count, 100u);
  EXPECT_EQ(config->limits.max_request_body_bytes, 0u);
  EXPECT_EQ(config->limits.request_header_timeout_ms, 10000u);
  EXPECT_EQ(config->limits.idle_timeout_ms, 60000u);
  EXPECT_EQ(config->drain_timeout_ms, 15000u);
  ASSERT_EQ(config->listeners.size(), 1u);
  EXPECT_EQ(config->listeners[0].context_path, "");
  EXPECT_TRUE(config->listeners[0].filters.empty());
  EXPECT_TRUE(config->routes.empty());
  EXPECT_TRUE(config->clusters.empty());
  EXPECT_TRUE(config->discovery.empty());
}

TEST(ConfigLoad, WorkersAuto) {
  auto config = loadOk(std::string("workers: auto\n") + kListener);
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->workers, 0u);
}

TEST(ConfigLoad, ClusterDefaultsAndDefaultBalancerMark) {
  auto config = loadOk(std::string(kListener) + "clusters:\n  - name: a\n    endpoints: [h:1]\n");
  ASSERT_NE(config, nullptr);
  const Cluster& a = config->clusters[0];
  EXPECT_EQ(a.balancer.name, "round_robin");
  EXPECT_TRUE(a.balancer.path.empty());
  EXPECT_TRUE(a.balancer.config.IsNull());
  EXPECT_EQ(a.balancer.mark.str(), "t.yaml:3:5");  // the cluster's own mark
  EXPECT_EQ(a.mark.str(), "t.yaml:3:5");
  EXPECT_EQ(a.hash_key.source, HashKey::Source::kNone);
  EXPECT_EQ(a.connect_timeout_ms, 1000u);
  EXPECT_EQ(a.response_timeout_ms, 15000u);
  EXPECT_EQ(a.idle_timeout_ms, 60000u);
  EXPECT_EQ(a.max_idle_connections, 64u);
  EXPECT_EQ(a.retry_policy.retries, 1u);
}

TEST(ConfigLoad, DiscoveryWithoutClusterDefaultsGetsRoundRobin) {
  auto config = loadOk(std::string(kListener) + "discovery: [zookeeper]\n");
  ASSERT_NE(config, nullptr);
  ASSERT_EQ(config->discovery.size(), 1u);
  EXPECT_EQ(config->discovery[0].plugin.name, "zookeeper");
  EXPECT_EQ(config->discovery[0].cluster_defaults.balancer.name, "round_robin");
}

TEST(ConfigLoad, PluginRefShorthandAndLongForms) {
  auto config = loadOk(std::string(kListener) + R"(clusters:
  - {name: a, balancer: random}
  - {name: b, balancer: {name: maglev, config: {table_size: 65537}}}
  - {name: c, balancer: {name: ring, path: /x/libring.so, config: [1, 2]}}
  - {name: d, balancer: {name: rr2, path: lib/librr2.so}}
)");
  ASSERT_NE(config, nullptr);
  const auto& c = config->clusters;
  EXPECT_EQ(c[0].balancer.name, "random");
  EXPECT_TRUE(c[0].balancer.config.IsNull());
  EXPECT_EQ(c[0].balancer.mark.str(), "t.yaml:3:25");
  EXPECT_EQ(c[1].balancer.name, "maglev");
  EXPECT_EQ(c[1].balancer.config["table_size"].as<int>(), 65537);
  EXPECT_EQ(c[2].balancer.path, "/x/libring.so");
  EXPECT_TRUE(c[2].balancer.config.IsSequence());  // any YAML is kept as is
  // A relative explicit path is resolved like plugin_paths (here: against the cwd).
  EXPECT_EQ(c[3].balancer.path, (std::filesystem::current_path() / "lib/librr2.so").string());
}

TEST(ConfigLoad, ContextPathIsNormalised) {
  const std::pair<const char*, const char*> cases[] = {
      {"/", ""}, {"", ""}, {"gateway", "/gateway"}, {"/gateway/", "/gateway"}, {"/a/b", "/a/b"}};
  for (const auto& [written, normalised] : cases) {
    auto config = loadOk(std::string("listeners:\n  - {name: e, address: h:1, context_path: '") +
                         written + "'}\n");
    ASSERT_NE(config, nullptr) << written;
    EXPECT_EQ(config->listeners[0].context_path, normalised) << written;
  }
}

TEST(ConfigLoad, RelativePluginPathsFromStringUseCurrentDirectory) {
  auto config = loadOk(std::string("plugin_paths: [plugins, ./a/../b, /abs]\n") + kListener);
  ASSERT_NE(config, nullptr);
  const auto cwd = std::filesystem::current_path();
  EXPECT_EQ(config->plugin_paths[0], (cwd / "plugins").string());
  EXPECT_EQ(config->plugin_paths[1], (cwd / "b").string());
  EXPECT_EQ(config->plugin_paths[2], "/abs");
}

TEST(ConfigLoad, RelativePluginPathsFromFileUseItsDirectory) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir = std::filesystem::path(tmp ? tmp : "/tmp") / "conf";
  std::filesystem::create_directories(dir);
  std::filesystem::path file = dir / "sluice.yaml";
  std::ofstream(file) << "plugin_paths: [plugins, ../lib]\n" << kListener;

  std::vector<std::string> errors;
  auto config = loadFile(file.string(), &errors);
  ASSERT_NE(config, nullptr) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(config->file, file.string());
  EXPECT_EQ(config->plugin_paths[0], (dir / "plugins").string());
  EXPECT_EQ(config->plugin_paths[1], (dir.parent_path() / "lib").string());
  EXPECT_EQ(config->listeners[0].mark.str(), file.string() + ":2:13");

  // The same file through a relative path: still resolved against the file's directory.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.parent_path());
  config = loadFile("conf/sluice.yaml", &errors);
  std::filesystem::current_path(cwd);
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->plugin_paths[0], (dir / "plugins").string());
}

TEST(ConfigLoad, MissingFileIsAnError) {
  std::vector<std::string> errors;
  EXPECT_EQ(loadFile("/nonexistent/sluice.yaml", &errors), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("/nonexistent/sluice.yaml: cannot read config file:", 0), 0u)
      << errors[0];

  errors.clear();
  EXPECT_EQ(loadFile("/", &errors), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "/: cannot read config file: it is a directory");
}

TEST(ConfigLoad, NullSectionsAreEmpty) {
  auto config = loadOk(std::string(kListener) + "routes:\nclusters:\nadmin:\n");
  ASSERT_NE(config, nullptr);
  EXPECT_TRUE(config->routes.empty());
  EXPECT_EQ(config->admin_address, "");
}

}  // namespace
}  // namespace sluice::config
