// ABI 1.2 sluice_config_api.resolve_path and depends_on_file (core/plugin/config_node.cc), through
// the SDK's ConfigNode::resolvePath / dependsOnFile, and plugin::changedFile (what a reload
// compares).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/plugin/plugin.h"
#include "test/core/plugin/testing/yaml_config.h"
#include "test/harness/env.h"

namespace sluice::plugin {
namespace {

void writeInPlace(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST(ResolvePathTest, RelativeIsTakenAgainstTheConfigDirectoryAbsoluteStays) {
  testing::YamlConfig yaml("keys_file: keys.txt\n", "/etc/sluice");
  sdk::ConfigNode root = yaml.node();
  EXPECT_EQ(root.resolvePath("keys.txt"), "/etc/sluice/keys.txt");
  EXPECT_EQ(root.resolvePath("sub/../auth/./keys.txt"), "/etc/sluice/auth/keys.txt");
  EXPECT_EQ(root.resolvePath("../keys.txt"), "/etc/keys.txt");
  EXPECT_EQ(root.resolvePath("/var/lib/keys"), "/var/lib/keys");
  // Any node of the tree resolves the same way (the plugin may ask at the key's own node).
  EXPECT_EQ(root["keys_file"].resolvePath("k"), "/etc/sluice/k");
  EXPECT_EQ(root["absent"].resolvePath("k"), "/etc/sluice/k");
}

TEST(ResolvePathTest, EmptyAndTooLongAreRefusedAtTheNode) {
  testing::YamlConfig yaml("a: 1\nkeys_file: x\n", "/etc/sluice");
  try {
    yaml.node()["keys_file"].resolvePath("");
    FAIL();
  } catch (const sdk::ConfigError& e) {
    EXPECT_EQ(e.line(), 2u);
  }
  EXPECT_THROW(yaml.node().resolvePath(std::string(5000, 'a')), sdk::ConfigError);
  // The C function: 0 when the result does not fit the caller's buffer.
  char small[8];
  EXPECT_EQ(configApi()->resolve_path(yaml.raw(), {"keys.txt", 8}, small, sizeof(small)), 0u);
  char big[64];
  EXPECT_EQ(configApi()->resolve_path(yaml.raw(), {"keys.txt", 8}, big, sizeof(big)), 20u);
  EXPECT_STREQ(big, "/etc/sluice/keys.txt");
}

TEST(ResolvePathTest, WithoutAConfigFileTheCurrentDirectoryIsTheBase) {
  // Plugin unit tests (no config file) and the embedded config resolve like the process does.
  testing::YamlConfig yaml("a: 1\n");
  std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(yaml.node().resolvePath("keys.txt"), cwd + "/keys.txt");
  EXPECT_EQ(configBaseDir("<embedded demo config>"), cwd);
  EXPECT_EQ(configBaseDir(""), cwd);
  EXPECT_EQ(configBaseDir("/etc/sluice/sluice.yaml"), "/etc/sluice");
  EXPECT_EQ(configBaseDir("conf/sluice.yaml"), cwd + "/conf");
}

TEST(DependsOnFileTest, RecordsThePathAndTheSha256OfTheContent) {
  std::string dir = test::testTmpDir();
  std::string path = test::uniqueTmpPath("keys.txt");
  writeInPlace(path, "abc");
  testing::YamlConfig yaml("a: 1\n", dir);
  yaml.node().dependsOnFile(path);
  ASSERT_EQ(yaml.files().size(), 1u);
  EXPECT_EQ(yaml.files()[0].path, path);
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  EXPECT_EQ(yaml.files()[0].sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // A relative path is recorded resolved; the same file twice is one entry.
  std::string name = std::filesystem::path(path).filename().string();
  EXPECT_EQ(configApi()->depends_on_file(yaml.raw(), {name.data(), name.size()}), 0);
  EXPECT_EQ(yaml.files().size(), 1u);
}

TEST(DependsOnFileTest, AnUnreadableFileIsRefusedAndNotRecorded) {
  testing::YamlConfig yaml("keys_file: x\n", test::testTmpDir());
  try {
    yaml.node()["keys_file"].dependsOnFile(test::testTmpDir() + "/no-such-file");
    FAIL();
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-file"), std::string::npos);
    EXPECT_EQ(e.line(), 1u);
  }
  // A directory is no file either.
  std::string d = test::testTmpDir();
  EXPECT_EQ(configApi()->depends_on_file(yaml.raw(), {d.data(), d.size()}), -1);
  if (geteuid() != 0) {  // root reads anything
    std::string path = test::uniqueTmpPath("secret");
    writeInPlace(path, "x");
    chmod(path.c_str(), 0);
    EXPECT_EQ(configApi()->depends_on_file(yaml.raw(), {path.data(), path.size()}), -1);
  }
  EXPECT_TRUE(yaml.files().empty());
}

TEST(ChangedFileTest, NamesTheFileWhoseContentDiffers) {
  std::string a = test::uniqueTmpPath("a"), b = test::uniqueTmpPath("b");
  writeInPlace(a, "one");
  writeInPlace(b, "two");
  testing::YamlConfig before("x: 1\n");
  before.node().dependsOnFile(a);
  before.node().dependsOnFile(b);
  testing::YamlConfig same("x: 1\n");
  same.node().dependsOnFile(a);
  same.node().dependsOnFile(b);
  EXPECT_EQ(changedFile(before.files(), same.files()), "");

  writeInPlace(b, "three");  // edited in place
  testing::YamlConfig after("x: 1\n");
  after.node().dependsOnFile(a);
  after.node().dependsOnFile(b);
  EXPECT_EQ(changedFile(before.files(), after.files()), b + " changed");

  testing::YamlConfig fewer("x: 1\n");
  fewer.node().dependsOnFile(a);
  EXPECT_EQ(changedFile(before.files(), fewer.files()), b + " no longer used");
  // Rewriting the same bytes (a touch, an editor's save) is no change.
  writeInPlace(a, "one");
  testing::YamlConfig touched("x: 1\n");
  touched.node().dependsOnFile(a);
  EXPECT_EQ(changedFile(fewer.files(), touched.files()), "");
}

}  // namespace
}  // namespace sluice::plugin
