// maglev config tests: keys, defaults, and refusals with their positions.
#include "balancers/maglev/maglev.h"

#include <gtest/gtest.h>

#include <string>

#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::balancers {
namespace {

std::string refusal(const std::string& yaml) {
  try {
    MaglevConfig config(testing::YamlConfig(yaml).node());
  } catch (const sdk::ConfigError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.what();
  }
  return "accepted";
}

TEST(MaglevConfigTest, ReadsAndValidatesItsKeys) {
  EXPECT_EQ(MaglevConfig(testing::YamlConfig("").node()).table_size, 65537u);
  EXPECT_EQ(MaglevConfig(testing::YamlConfig("table_size: 5000011\n").node()).table_size, 5000011u);
  EXPECT_EQ(refusal("table_size: 65536\n"),
            "1:13: table_size 65536 is not a prime (try 65537, 131071 or 524287)");
  EXPECT_EQ(refusal("table_size: 2\n"), "1:13: expected an integer from 3 to 5000011");
  EXPECT_EQ(refusal("table_size: 5000012\n"), "1:13: expected an integer from 3 to 5000011");
  EXPECT_EQ(refusal("\ntable_size: 251\nseed: 4\n"),
            "3:7: unknown key 'seed' (expected one of: table_size)");
  EXPECT_TRUE(isPrime(3) && isPrime(65537) && isPrime(131071) && isPrime(5000011));
  EXPECT_FALSE(isPrime(1) || isPrime(9) || isPrime(65535) || isPrime(5000009));
}

}  // namespace
}  // namespace sluice::balancers
