// ring_hash config tests: keys, defaults, and refusals with their positions.
#include "balancers/ring_hash/ring_hash.h"

#include <gtest/gtest.h>

#include <string>

#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::balancers {
namespace {

std::string refusal(const std::string& yaml) {
  try {
    RingHashConfig config(testing::YamlConfig(yaml).node());
  } catch (const sdk::ConfigError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.what();
  }
  return "accepted";
}

TEST(RingHashConfigTest, ReadsAndValidatesItsKeys) {
  RingHashConfig defaults(testing::YamlConfig("").node());
  EXPECT_EQ(defaults.min_ring_size, 1024u);
  EXPECT_EQ(defaults.max_ring_size, 8388608u);
  EXPECT_EQ(refusal("min_ring_size: 64\nmax_ring_size: 64\n"), "accepted");
  EXPECT_EQ(refusal("min_ring_size: 64\nvirtual_nodes: 3\n"),
            "2:16: unknown key 'virtual_nodes' (expected one of: min_ring_size, max_ring_size)");
  EXPECT_EQ(refusal("min_ring_size: 0\n"), "1:16: expected an integer from 1 to 8388608");
  EXPECT_EQ(refusal("max_ring_size: 8388609\n"), "1:16: expected an integer from 1 to 8388608");
  EXPECT_EQ(refusal("min_ring_size: 4096\nmax_ring_size: 1024\n"),
            "2:16: max_ring_size (1024) is below min_ring_size (4096)");
  EXPECT_EQ(refusal("min_ring_size: 9000000\n"), "1:16: expected an integer from 1 to 8388608");
  EXPECT_EQ(refusal("min_ring_size: 8388608\n"), "accepted");
}

}  // namespace
}  // namespace sluice::balancers
