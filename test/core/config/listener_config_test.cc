// Listener keys of the listen socket and the connection spread: `backlog` unset by default (0:
// net.core.somaxconn), read when set, and the errors for values out of range or not an integer;
// `connection_balance` `exact` by default, `kernel` when set, and any other value refused with
// the two choices. Errors carry file:line:col, as for every key.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::loadErrors;
using testing::loadOk;
using testing::oneListener;

TEST(ListenerBacklogConfig, UnsetMeansTheKernelsSomaxconn) {
  auto config = loadOk(oneListener(""));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].backlog, 0u);
}

TEST(ListenerBacklogConfig, ValueIsRead) {
  auto config = loadOk(oneListener("    backlog: 8192\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].backlog, 8192u);
  config = loadOk(oneListener("    backlog: 1\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].backlog, 1u);
}

TEST(ListenerBacklogConfig, OutOfRangeAndNonIntegersAreErrors) {
  EXPECT_TRUE(hasError(loadErrors(oneListener("    backlog: 0\n")), "4:14",
                       "backlog: expected an integer 1..65535, got '0'"));
  EXPECT_TRUE(hasError(loadErrors(oneListener("    backlog: 65536\n")), "4:14",
                       "expected an integer 1..65535"));
  EXPECT_TRUE(hasError(loadErrors(oneListener("    backlog: -5\n")), "4:14",
                       "expected an integer 1..65535"));
  EXPECT_TRUE(hasError(loadErrors(oneListener("    backlog: lots\n")), "4:14",
                       "expected an integer 1..65535, got 'lots'"));
  EXPECT_TRUE(hasError(loadErrors(oneListener("    backlog: \"512\"\n")), "4:14",
                       "expected an integer 1..65535"));
}

TEST(ListenerBalanceConfig, ExactByDefault) {
  auto config = loadOk(oneListener(""));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].connection_balance, ConnectionBalance::kExact);
}

TEST(ListenerBalanceConfig, BothValuesAreRead) {
  auto config = loadOk(oneListener("    connection_balance: kernel\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].connection_balance, ConnectionBalance::kKernel);
  config = loadOk(oneListener("    connection_balance: exact\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].connection_balance, ConnectionBalance::kExact);
}

TEST(ListenerBalanceConfig, OtherValuesAreErrors) {
  EXPECT_TRUE(hasError(loadErrors(oneListener("    connection_balance: fair\n")), "4:25",
                       "connection_balance: expected 'exact' or 'kernel', got 'fair'"));
  EXPECT_TRUE(hasError(loadErrors(oneListener("    connection_balance: [exact]\n")), "4:25",
                       "connection_balance"));
}

}  // namespace
}  // namespace sluice::config
