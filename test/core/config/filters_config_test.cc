// Filter entries (failure_mode, disabled) and routes[].filters / filters_mode / name: what a
// user writes, what the loader keeps, and the errors with their positions.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::loadErrors;
using testing::loadOk;

// A listener with filters `a` and `b`, a cluster, and `routes` appended (line 7 onwards).
std::string withRoutes(const std::string& routes) {
  return "listeners:\n"
         "  - name: edge\n"
         "    address: 127.0.0.1:1\n"
         "    filters: [a, {name: b, failure_mode: open}]\n"
         "clusters: [{name: c, endpoints: [{address: 127.0.0.1:2}]}]\n"
         "routes:\n" +
         routes;
}

TEST(FiltersConfig, FailureModeDefaultsToClosedAndOpenIsKept) {
  auto config = loadOk(withRoutes("  - {prefix: /, cluster: c}\n"));
  ASSERT_NE(config, nullptr);
  const auto& f = config->listeners[0].filters;
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].failure_mode, FailureMode::kClosed);
  EXPECT_FALSE(f[0].failure_mode_given);
  EXPECT_EQ(f[1].failure_mode, FailureMode::kOpen);
  EXPECT_TRUE(f[1].failure_mode_given);
}

TEST(FiltersConfig, BadFailureModeNamesBothChoices) {
  auto errors = loadErrors(
      "listeners: [{name: e, address: 127.0.0.1:1, filters: [{name: a, failure_mode: maybe}]}]\n");
  EXPECT_TRUE(hasError(errors, "1:79", "expected 'open' or 'closed', got 'maybe'"));
}

TEST(FiltersConfig, DisabledOnAListenerEntryIsRefused) {
  auto errors = loadErrors(
      "listeners:\n  - name: e\n    address: 127.0.0.1:1\n    filters:\n"
      "      - {name: a, disabled: true}\n");
  EXPECT_TRUE(hasError(errors, "5:29", "only a route's filter entry can be disabled"));
}

TEST(FiltersConfig, RouteNameFiltersAndModeAreRead) {
  auto config =
      loadOk(withRoutes("  - name: api.v1\n"
                        "    prefix: /api\n"
                        "    cluster: c\n"
                        "    filters:\n"
                        "      - {name: a, config: {x: 1}}\n"
                        "      - {name: b, disabled: true}\n"
                        "      - {name: z, failure_mode: open}\n"
                        "  - prefix: /raw\n"
                        "    cluster: c\n"
                        "    filters_mode: replace\n"
                        "    filters: [z]\n"
                        "  - {prefix: /, cluster: c}\n"));
  ASSERT_NE(config, nullptr);
  ASSERT_EQ(config->routes.size(), 3u);
  const Route& api = config->routes[0];
  EXPECT_EQ(api.name, "api.v1");
  EXPECT_EQ(api.filters_mode, FiltersMode::kExtend);
  ASSERT_EQ(api.filters.size(), 3u);
  EXPECT_EQ(api.filters[0].name, "a");
  EXPECT_EQ(api.filters[0].config["x"].as<int>(), 1);
  EXPECT_TRUE(api.filters[1].disabled);
  EXPECT_FALSE(api.filters[2].disabled);
  EXPECT_EQ(api.filters[2].failure_mode, FailureMode::kOpen);
  EXPECT_EQ(api.filters[0].mark.line, 11u);
  EXPECT_EQ(config->routes[1].filters_mode, FiltersMode::kReplace);
  EXPECT_EQ(config->routes[1].name, "");
  EXPECT_TRUE(config->routes[2].filters.empty());
}

TEST(FiltersConfig, BadFiltersModeIsRefused) {
  auto errors = loadErrors(withRoutes("  - {prefix: /, cluster: c, filters_mode: append}\n"));
  EXPECT_TRUE(hasError(errors, "7:43", "expected 'extend' or 'replace', got 'append'"));
}

TEST(FiltersConfig, RouteNamesAreNamesAndUnique) {
  auto errors =
      loadErrors(withRoutes("  - {name: x, prefix: /a, cluster: c}\n"
                            "  - {name: x, prefix: /b, cluster: c}\n"
                            "  - {name: 'no spaces', prefix: /d, cluster: c}\n"));
  EXPECT_TRUE(hasError(errors, "8:12", "duplicate route name 'x' (first at t.yaml:7:12)"));
  EXPECT_TRUE(hasError(errors, "9:12", "no spaces"));
}

TEST(FiltersConfig, DisablingAFilterNoListenerRunsIsAnErrorListingTheChain) {
  auto errors =
      loadErrors(withRoutes("  - {prefix: /, cluster: c, filters: [{name: q, disabled: true}]}\n"));
  EXPECT_TRUE(hasError(errors, "7:39",
                       "cannot disable 'q' on routes[0] (/): no listener's filters contain it "
                       "(the listeners' filters are 'a', 'b')"));
}

TEST(FiltersConfig, DisabledEntryInReplaceModeOrWithConfigIsAnError) {
  auto errors = loadErrors(withRoutes(
      "  - {prefix: /r, cluster: c, filters_mode: replace, filters: [{name: a, disabled: true}]}\n"
      "  - {prefix: /s, cluster: c, filters: [{name: a, disabled: true, config: {x: 1}}]}\n"));
  EXPECT_TRUE(hasError(errors, "7:63", "with filters_mode: replace"));
  EXPECT_TRUE(hasError(errors, "8:40", "a disabled entry takes no config"));
}

TEST(FiltersConfig, OverridingAFilterTheListenerRunsTwiceIsAmbiguous) {
  auto errors = loadErrors(
      "listeners: [{name: edge, address: 127.0.0.1:1, filters: [a, a]}]\n"
      "clusters: [{name: c, endpoints: [{address: 127.0.0.1:2}]}]\n"
      "routes:\n"
      "  - {prefix: /, cluster: c, filters: [{name: a, config: {x: 1}}]}\n");
  EXPECT_TRUE(hasError(errors, "4:39", "'a' is ambiguous: listener 'edge' runs it more than once"));
}

TEST(FiltersConfig, ReplaceModeMayListAFilterTwiceAndAListenerMayToo) {
  auto config = loadOk(
      "listeners: [{name: edge, address: 127.0.0.1:1, filters: [a, a]}]\n"
      "clusters: [{name: c, endpoints: [{address: 127.0.0.1:2}]}]\n"
      "routes:\n"
      "  - {prefix: /, cluster: c, filters_mode: replace, filters: [a, a]}\n");
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->routes[0].filters.size(), 2u);
}

TEST(FiltersConfig, OverridingTheSameListenerFilterTwiceInOneRouteIsAnError) {
  auto errors = loadErrors(withRoutes("  - {prefix: /, cluster: c, filters: [a, a]}\n"));
  EXPECT_TRUE(hasError(errors, "7:42", "'a' appears twice in this route's filters"));
}

TEST(FiltersConfig, UnknownKeyInAFilterEntryListsTheAllowedOnes) {
  auto errors =
      loadErrors(withRoutes("  - {prefix: /, cluster: c, filters: [{name: a, mode: x}]}\n"));
  EXPECT_TRUE(hasError(errors, "7:49", "failure_mode"));
}

}  // namespace
}  // namespace sluice::config
