// Hot swap: a plugin file replaced at the same path loads beside the old one (which keeps
// working), an unchanged file maps to the Library already open, and overwriting the file in
// place does not touch a loaded plugin (the loader dlopen()s private copies).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>

#include "test/core/plugin/loader_fixture.h"

namespace sluice::plugin {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(LoaderTest, ReplacedFileLoadsBesideTheOldOne) {
  const std::string v1 = slurp(test::runfile("test/core/plugin/fixtures/libswap_v1.so"));
  const std::string v2 = slurp(test::runfile("test/core/plugin/fixtures/libswap_v2.so"));
  ASSERT_FALSE(v1.empty());
  const std::string dir = test::testTmpDir() + "/swap";
  ::mkdir(dir.c_str(), 0755);
  config::PluginRef r = ref("swap");
  r.path = dir + "/libswap.so";
  std::string error;

  ASSERT_TRUE(test::writeFile(r.path, v1));  // temp file + rename, like a deploy
  auto a = loader_->load(r, SLUICE_PLUGIN_KIND_FILTER, &error);
  ASSERT_NE(a, nullptr) << error;
  EXPECT_STREQ(a->descriptor().version, "1");
  EXPECT_EQ(loader_->load(r, SLUICE_PLUGIN_KIND_FILTER, &error), a);  // unchanged: same Library

  ASSERT_TRUE(test::writeFile(r.path, v2));
  auto b = loader_->load(r, SLUICE_PLUGIN_KIND_FILTER, &error);
  ASSERT_NE(b, nullptr) << error;
  EXPECT_NE(b, a);
  EXPECT_STREQ(b->descriptor().version, "2");
  EXPECT_STREQ(a->descriptor().version, "1");  // the old one is still mapped and intact
  EXPECT_EQ(a->path(), b->path());

  {
    std::ofstream in_place(r.path, std::ios::binary | std::ios::trunc);  // same inode
    in_place << v1;
  }
  auto c = loader_->load(r, SLUICE_PLUGIN_KIND_FILTER, &error);
  ASSERT_NE(c, nullptr) << error;
  EXPECT_STREQ(c->descriptor().version, "1");
  EXPECT_STREQ(b->descriptor().version, "2");
  // Both still run their own code.
  for (const auto& lib : {a, b, c}) {
    char msg[64] = "";
    sluice_error err{msg, sizeof(msg), 0, 0};
    void* config = lib->filter()->config_create(lib->hostApi(), nullptr, &err);
    // A NULL node is a null config to the host's accessors: accepted.
    ASSERT_NE(config, nullptr) << msg;
    lib->filter()->config_destroy(config);
  }
}

}  // namespace
}  // namespace sluice::plugin
