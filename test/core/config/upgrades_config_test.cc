// Listener `upgrades` and `tunnel_idle_timeout_ms`: defaults, normalisation and errors.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::loadErrors;
using testing::loadOk;
using testing::oneListener;

TEST(UpgradesConfig, DefaultsAllowWebSocketWithAnHourOfIdleTime) {
  auto config = loadOk(oneListener(""));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].upgrades, std::vector<std::string>{"websocket"});
  EXPECT_EQ(config->listeners[0].tunnel_idle_timeout_ms, 3600000u);
}

TEST(UpgradesConfig, NamesAreLowercasedAndVersionsKept) {
  auto config =
      loadOk(oneListener("    upgrades: [WebSocket, foo/2]\n    tunnel_idle_timeout_ms: 30000\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->listeners[0].upgrades, (std::vector<std::string>{"websocket", "foo/2"}));
  EXPECT_EQ(config->listeners[0].tunnel_idle_timeout_ms, 30000u);
}

TEST(UpgradesConfig, EmptyListTurnsUpgradesOff) {
  auto config = loadOk(oneListener("    upgrades: []\n"));
  ASSERT_NE(config, nullptr);
  EXPECT_TRUE(config->listeners[0].upgrades.empty());
}

TEST(UpgradesConfig, BadNamesAndDuplicatesAreErrors) {
  auto errors =
      loadErrors(oneListener("    upgrades: [\"web socket\", websocket, WEBSOCKET, a/, /1]\n"));
  EXPECT_TRUE(hasError(errors, "4:16", "not a protocol name: 'web socket'"));
  EXPECT_TRUE(hasError(errors, "4:41", "'websocket' listed twice"));
  EXPECT_TRUE(hasError(errors, "4:52", "not a protocol name: 'a/'"));
  EXPECT_TRUE(hasError(errors, "4:56", "not a protocol name: '/1'"));
}

TEST(UpgradesConfig, TunnelIdleTimeoutMustBePositive) {
  auto errors = loadErrors(oneListener("    tunnel_idle_timeout_ms: 0\n"));
  EXPECT_TRUE(hasError(errors, "4:29", "tunnel_idle_timeout_ms"));
}

}  // namespace
}  // namespace sluice::config
