// The host's sluice_config_api over yaml-cpp, through the SDK's ConfigNode.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sluice::plugin
