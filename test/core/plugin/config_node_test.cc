// The host's sluice_config_api over yaml-cpp, through the SDK's ConfigNode.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "core/plugin/config_node.h"
#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::plugin {
namespace {

TEST(ConfigNodeTest, WalksMapsSequencesAndScalarsWithOneBasedMarks) {
  testing::YamlConfig yaml("a: 1\nlist:\n  - x\n  - 'y z'\nmap: {k: v}\nempty:\n");
  sdk::ConfigNode root = yaml.node();
  ASSERT_TRUE(root.isMap());
  EXPECT_EQ(root.size(), 4u);
  EXPECT_EQ(root.keyAt(0), "a");
  EXPECT_EQ(root.keyAt(3), "empty");
  EXPECT_EQ(root["a"].asInt(0, 5), 1);
  EXPECT_EQ(root["a"].line(), 1u);
  EXPECT_EQ(root["a"].column(), 4u);
  sdk::ConfigNode list = root["list"];
  ASSERT_TRUE(list.isSequence());
  EXPECT_EQ(list.asStringList(), (std::vector<std::string>{"x", "y z"}));
  EXPECT_EQ(list.at(1).line(), 4u);
  EXPECT_EQ(list.at(1).column(), 5u);
  EXPECT_EQ(root["map"].asStringMap(),
            (std::vector<std::pair<std::string, std::string>>{{"k", "v"}}));
  EXPECT_TRUE(root["empty"].isNull());
  EXPECT_TRUE(root["absent"].isNull());
  EXPECT_EQ(root["absent"].line(), 0u);
  EXPECT_TRUE(root["a"]["nested"].isNull());
  EXPECT_TRUE(list.at(9).isNull());
  EXPECT_EQ(root.keyAt(9), "");
  EXPECT_EQ(list.scalar(), "");
  EXPECT_TRUE(root.has("a"));
  EXPECT_FALSE(root.has("empty"));
}

TEST(ConfigNodeTest, NoConfigBlockIsANullRoot) {
  testing::YamlConfig none("");
  EXPECT_TRUE(none.node().isNull());
  EXPECT_EQ(none.node().size(), 0u);
  EXPECT_EQ(none.node().line(), 0u);
  EXPECT_NO_THROW(none.node().requireOnlyKeys({"x"}));
  EXPECT_EQ(none.node().getString("x", "default"), "default");
}

TEST(ConfigNodeTest, TypedGettersRefuseWithThePosition) {
  testing::YamlConfig yaml("n: 12x\nb: maybe\nd: 1.5\nok: Yes\n");
  sdk::ConfigNode root = yaml.node();
  try {
    root.getInt("n", 0, 0, 100);
    FAIL();
  } catch (const sdk::ConfigError& e) {
    EXPECT_STREQ(e.what(), "expected an integer from 0 to 100");
    EXPECT_EQ(e.line(), 1u);
    EXPECT_EQ(e.column(), 4u);
  }
  EXPECT_THROW(root.getBool("b", false), sdk::ConfigError);
  EXPECT_TRUE(root.getBool("ok", false));
  EXPECT_DOUBLE_EQ(root.getDouble("d", 0), 1.5);
  EXPECT_EQ(root.getString("missing", "fallback"), "fallback");
  EXPECT_THROW(root["d"].asStringMap(), sdk::ConfigError);
  EXPECT_THROW(root["ok"].asInt(0, 1), sdk::ConfigError);
}

std::string resolved(const sluice_config_node* n, const std::string& path) {
  char out[512];
  size_t len = configApi()->resolve_path(n, sluice_str{path.data(), path.size()}, out, sizeof(out));
  return std::string(out, len);
}

TEST(ConfigNodeTest, ResolvePathIsRelativeToTheConfigFile) {
  ConfigTree tree(YAML::Load("k: v"), "/etc/sluice/sluice.yaml");
  EXPECT_EQ(resolved(tree.root(), "keys.txt"), "/etc/sluice/keys.txt");
  EXPECT_EQ(resolved(tree.root(), "sub/k.pem"), "/etc/sluice/sub/k.pem");
  EXPECT_EQ(resolved(tree.root(), "/abs/k.pem"), "/abs/k.pem");
  EXPECT_EQ(resolved(tree.root(), ""), "");
  char tiny[4];
  EXPECT_EQ(configApi()->resolve_path(tree.root(), sluice_str{"keys.txt", 8}, tiny, sizeof(tiny)),
            0u);  // does not fit
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ConfigTree embedded(YAML::Load("k: v"));  // the embedded default config: the current directory
  EXPECT_EQ(resolved(embedded.root(), "keys.txt"), std::string(cwd) + "/keys.txt");
  ConfigTree relative(YAML::Load("k: v"), "conf/sluice.yaml");
  EXPECT_EQ(resolved(relative.root(), "keys.txt"), std::string(cwd) + "/conf/keys.txt");
}

TEST(ConfigNodeTest, DependsOnFileRecordsTheContentDigest) {
  const char* dir = getenv("TEST_TMPDIR");
  std::string base = std::string(dir != nullptr ? dir : "/tmp") + "/";
  std::string file = base + "deps_keys.txt";
  std::ofstream(file) << "alice:1\n";
  auto digestOf = [&](const std::string& content) {
    std::ofstream(file, std::ios::trunc) << content;
    ConfigTree tree(YAML::Load("k: v"), base + "sluice.yaml");
    EXPECT_EQ(configApi()->depends_on_file(tree.root(), sluice_str{"deps_keys.txt", 13}), 0);
    EXPECT_EQ(configApi()->depends_on_file(tree.root(), sluice_str{"missing.txt", 11}), -1);
    std::vector<FileDependency> deps = tree.takeDependencies();
    EXPECT_EQ(deps.size(), 1u);  // the missing file recorded nothing
    EXPECT_EQ(deps.empty() ? "" : deps[0].path, file);
    return deps.empty() ? 0 : deps[0].digest;
  };
  uint64_t a = digestOf("alice:1\n");
  EXPECT_EQ(digestOf("alice:1\n"), a);  // same content: a reload may keep the instance
  EXPECT_NE(digestOf("alice:2\n"), a);  // changed: it is rebuilt
  std::remove(file.c_str());
}

}  // namespace
}  // namespace sluice::plugin
