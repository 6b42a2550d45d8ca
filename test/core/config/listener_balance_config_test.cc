// Listener `connection_balance`: `exact` by default, `kernel` when set, and any other value
// refused with file:line:col and the two choices.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::loadErrors;
using testing::loadOk;

std::string listener(const std::string& extra) {
  return "listeners:\n  - name: e\n    address: 127.0.0.1:1\n" + extra;
}

TEST(ListenerBalanceConfig, ExactByDefault) {
  auto config = loadOk(listener(""));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].connection_balance, ConnectionBalance::kExact);
}

TEST(ListenerBalanceConfig, BothValuesAreRead) {
  auto config = loadOk(listener("    connection_balance: kernel\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].connection_balance, ConnectionBalance::kKernel);
  config = loadOk(listener("    connection_balance: exact\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].connection_balance, ConnectionBalance::kExact);
}

TEST(ListenerBalanceConfig, OtherValuesAreErrors) {
  EXPECT_TRUE(hasError(loadErrors(listener("    connection_balance: fair\n")), "4:25",
                       "connection_balance: expected 'exact' or 'kernel', got 'fair'"));
  EXPECT_TRUE(hasError(loadErrors(listener("    connection_balance: [exact]\n")), "4:25",
                       "connection_balance"));
}

}  // namespace
}  // namespace sluice::config
