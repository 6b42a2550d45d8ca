// Listener `backlog`: unset by default (0: net.core.somaxconn), read when set, and the errors
// for values out of range or not an integer (file:line:col, as for every key).
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

TEST(ListenerBacklogConfig, UnsetMeansTheKernelsSomaxconn) {
  auto config = loadOk(listener(""));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].backlog, 0u);
}

TEST(ListenerBacklogConfig, ValueIsRead) {
  auto config = loadOk(listener("    backlog: 8192\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].backlog, 8192u);
  config = loadOk(listener("    backlog: 1\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].backlog, 1u);
}

TEST(ListenerBacklogConfig, OutOfRangeAndNonIntegersAreErrors) {
  EXPECT_TRUE(hasError(loadErrors(listener("    backlog: 0\n")), "4:14",
                       "backlog: expected an integer 1..65535, got '0'"));
  EXPECT_TRUE(hasError(loadErrors(listener("    backlog: 65536\n")), "4:14",
                       "expected an integer 1..65535"));
  EXPECT_TRUE(
      hasError(loadErrors(listener("    backlog: -5\n")), "4:14", "expected an integer 1..65535"));
  EXPECT_TRUE(hasError(loadErrors(listener("    backlog: lots\n")), "4:14",
                       "expected an integer 1..65535, got 'lots'"));
  EXPECT_TRUE(hasError(loadErrors(listener("    backlog: \"512\"\n")), "4:14",
                       "expected an integer 1..65535"));
}

}  // namespace
}  // namespace sluice::config
