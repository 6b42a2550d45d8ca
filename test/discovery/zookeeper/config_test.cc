// The plugin's YAML config: defaults, every key, and refusals with line and column. Plus one
// pass through the plugin's C hook table, as the core calls config_create.
#include "discovery/zookeeper/config.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/api/discovery.h"
#include "core/plugin/config_node.h"
#include "test/core/plugin/testing/yaml_config.h"
#include "test/discovery/testing/recording_host.h"

extern "C" const sluice_plugin_descriptor* sluice_plugin_entry(void);

namespace sluice::zookeeper {
namespace {

std::optional<ZookeeperConfig> configFrom(const std::string& yaml, std::string* error) {
  try {
    return ZookeeperConfig(testing::YamlConfig(yaml).node());
  } catch (const sdk::ConfigError& e) {
    *error = std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.what();
    return std::nullopt;
  }
}

std::string refusal(const std::string& yaml) {
  std::string error;
  return configFrom(yaml, &error).has_value() ? "accepted" : error;
}

TEST(ZookeeperConfigTest, Defaults) {
  std::string error;
  auto c = configFrom("servers: 127.0.0.1:2181", &error);
  ASSERT_TRUE(c.has_value()) << error;
  EXPECT_EQ(c->servers, "127.0.0.1:2181");
  EXPECT_EQ(c->format, FormatKind::kSluice);
  EXPECT_EQ(c->root, "/sluice");
  EXPECT_EQ(c->session_timeout_ms, 10000);
  EXPECT_FALSE(c->auth.has_value());
  EXPECT_TRUE(c->empty_protection);
  EXPECT_EQ(c->cache_file, "");
  EXPECT_EQ(c->debounce_ms, 20);
  EXPECT_EQ(c->initial_wait_ms, 3000);
  EXPECT_FALSE(c->register_self.has_value());
  EXPECT_EQ(configFrom("{servers: 'h:1', format: dubbo}", &error)->root, "/dubbo");
  EXPECT_EQ(configFrom("{servers: 'h:1', format: curator}", &error)->root, "/services");
}

TEST(ZookeeperConfigTest, EveryKey) {
  std::string error;
  auto c = configFrom(R"(
servers: zk1:2181,zk2:2181,[::1]:2181/apps/prod
format: dubbo
root: /dubbo-gray
session_timeout_ms: 4000
auth: { user: gw, password: "s3cret:x" }
empty_protection: off
cache_file: /tmp/zk.yaml
debounce_ms: 0
initial_wait_ms: 100
dubbo: { protocols: [REST, http], no_context_path: { cluster: legacy }, default_weight: 7 }
register: { path: /gateways/edge, addresses: [10.0.0.5:8080, "auto:8443"], weight: 3, zone: a,
            metadata: { version: "1.2" } }
)",
                      &error);
  ASSERT_TRUE(c.has_value()) << error;
  EXPECT_EQ(c->servers, "zk1:2181,zk2:2181,[::1]:2181/apps/prod");
  EXPECT_EQ(c->root, "/dubbo-gray");
  EXPECT_EQ(c->session_timeout_ms, 4000);
  EXPECT_EQ(c->auth->first, "gw");
  EXPECT_EQ(c->auth->second, "s3cret:x");
  EXPECT_FALSE(c->empty_protection);
  EXPECT_EQ(c->cache_file, "/tmp/zk.yaml");
  EXPECT_EQ(c->debounce_ms, 0);
  EXPECT_EQ(c->initial_wait_ms, 100);
  EXPECT_EQ(c->dubbo.protocols, (std::vector<std::string>{"rest", "http"}));
  EXPECT_EQ(c->dubbo.no_context_path, DubboOptions::NoContextPath::kCluster);
  EXPECT_EQ(c->dubbo.no_context_path_cluster, "legacy");
  EXPECT_EQ(c->dubbo.default_weight, 7u);
  ASSERT_TRUE(c->register_self.has_value());
  EXPECT_EQ(c->register_self->path, "/gateways/edge");
  EXPECT_EQ(c->register_self->addresses, (std::vector<std::string>{"10.0.0.5:8080", "auto:8443"}));
  EXPECT_EQ(c->register_self->data,
            R"({"weight": 3, "zone": "a", "metadata": {"version": "1.2"}})");
}

TEST(ZookeeperConfigTest, Refusals) {
  EXPECT_EQ(refusal(""), "0:0: missing config (at least `servers:`)");
  EXPECT_EQ(refusal("format: dubbo"),
            "0:0: missing key 'servers' (e.g. 127.0.0.1:2181 or h1:2181,h2:2181/chroot)");
  EXPECT_EQ(refusal("servers: h:1\nserver: x"),
            "2:9: unknown key 'server' (expected one of: servers, format, root, "
            "session_timeout_ms, auth, empty_protection, cache_file, debounce_ms, "
            "initial_wait_ms, dubbo, register)");
  EXPECT_EQ(refusal("servers: zk1"), "1:10: servers: 'zk1': missing port (expected host:port)");
  EXPECT_EQ(refusal("servers: zk1:2181,"), "1:10: servers: '': missing port (expected host:port)");
  EXPECT_EQ(refusal("servers: zk1:2181/a//b"), "1:10: bad chroot '/a//b' (expected /a/b)");
  EXPECT_EQ(refusal("servers: h:1\nformat: eureka"), "2:9: expected sluice, dubbo or curator");
  EXPECT_EQ(refusal("servers: h:1\nroot: services"),
            "2:7: expected an absolute path like /services (no trailing '/')");
  EXPECT_EQ(refusal("servers: h:1\nroot: /a/"),
            "2:7: expected an absolute path like /services (no trailing '/')");
  EXPECT_EQ(refusal("servers: h:1\nsession_timeout_ms: 10"),
            "2:21: expected an integer from 1000 to 600000");
  EXPECT_EQ(refusal("servers: h:1\nauth: {user: 'a:b', password: x}"),
            "2:7: auth: expected { user: NAME, password: SECRET } (no ':' in the user)");
  EXPECT_EQ(refusal("servers: h:1\ndubbo: {protocols: [rest]}"),
            "2:8: dubbo options need `format: dubbo`");
  EXPECT_EQ(refusal("servers: h:1\nformat: dubbo\ndubbo: {no_context_path: drop}"),
            "3:26: expected skip, interface or { cluster: NAME }");
  EXPECT_EQ(refusal("servers: h:1\nformat: dubbo\ndubbo: {protocols: []}"),
            "3:20: expected at least one protocol");
  EXPECT_EQ(refusal("servers: h:1\nregister: {path: /g}"),
            "2:11: missing key 'addresses' (this gateway's host:port list)");
  EXPECT_EQ(refusal("servers: h:1\nregister: {path: g, addresses: [h:1]}"),
            "2:18: expected an absolute path like /sluice-gateways/edge");
  EXPECT_EQ(refusal("servers: h:1\nregister: {path: /g, addresses: [h]}"),
            "2:33: 'h': missing port (expected host:port)");
}

TEST(ZookeeperPluginTest, DescriptorAndConfigCreateThroughTheCAbi) {
  const sluice_plugin_descriptor* d = sluice_plugin_entry();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind, SLUICE_PLUGIN_KIND_DISCOVERY);
  EXPECT_STREQ(d->name, "zookeeper");
  const auto* hooks = static_cast<const sluice_discovery_plugin*>(d->hooks);
  sluice::testing::RecordingHost host;
  testing::YamlConfig good("{servers: '127.0.0.1:1', initial_wait_ms: 0}");
  char message[256] = {};
  sluice_error err{message, sizeof message, 0, 0};
  void* config = hooks->config_create(host.raw(plugin::configApi()), good.raw(), &err);
  ASSERT_NE(config, nullptr) << message;
  // Nothing listens on port 1: start() returns at once (initial_wait_ms: 0), stop() closes.
  EXPECT_EQ(hooks->start(config, host.sinkHandle()), 0);
  hooks->stop(config);
  hooks->config_destroy(config);
  testing::YamlConfig bad("{servers: '127.0.0.1:1', format: x}");
  EXPECT_EQ(hooks->config_create(host.raw(plugin::configApi()), bad.raw(), &err), nullptr);
  EXPECT_STREQ(message, "expected sluice, dubbo or curator");
}

}  // namespace
}  // namespace sluice::zookeeper
