// Route filter chains as the bootstrap composes them (extend, replace, disabled, per-route
// config, inherited path and failure_mode), kept across a rebuild when unchanged, and as a
// worker runs them: forRoute by index, worker instances shared with the listener's chain for
// the listener's filters, route chains kept by setRoutes when their info is unchanged.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/server/bootstrap.h"
#include "test/harness/env.h"

namespace sluice::server {
namespace {

// The runfiles folder that holds `file`'s plugin folder (filters/, balancers/).
std::string pluginDir(const std::string& file) {
  std::string p = test::runfile(file);
  p = p.substr(0, p.rfind('/'));
  return p.substr(0, p.rfind('/'));
}

// Listener `edge` runs [request_id, headers(open)]; ${ROUTES} are appended.
std::string yaml(const std::string& routes) {
  return "plugin_paths: [\"" + pluginDir("filters/headers/libheaders.so") + "\", \"" +
         pluginDir("balancers/round_robin/libround_robin.so") +
         "\"]\n"
         "listeners:\n"
         "  - name: edge\n"
         "    address: 127.0.0.1:1\n"
         "    filters:\n"
         "      - request_id\n"
         "      - {name: headers, failure_mode: open, config: {request: {set: {X-A: l}}}}\n"
         "  - name: side\n"
         "    address: 127.0.0.1:2\n"
         "clusters: [{name: c, endpoints: [127.0.0.1:3]}]\n"
         "routes:\n" +
         routes;
}

const char kRoutes[] =
    "  - {name: plain, prefix: /plain, cluster: c}\n"
    "  - name: per\n"
    "    prefix: /per\n"
    "    cluster: c\n"
    "    filters: [{name: headers, config: {request: {set: {X-A: r}}}}]\n"
    "  - name: off\n"
    "    prefix: /off\n"
    "    cluster: c\n"
    "    filters: [{name: request_id, disabled: true}, {name: headers, failure_mode: closed}]\n"
    "  - name: only\n"
    "    prefix: /only\n"
    "    cluster: c\n"
    "    filters_mode: replace\n"
    "    filters: [headers]\n";

struct Fixture {
  std::unique_ptr<plugin::Loader> loader;
  Built built;
  bool build(const std::string& text, const Built* previous = nullptr) {
    std::vector<std::string> errors;
    auto config = config::loadString(text, "t.yaml", &errors);
    if (config == nullptr) {
      ADD_FAILURE() << errors.front();
      return false;
    }
    if (loader == nullptr) loader = makeLoader(*config);
    built = Built{};
    bool ok = server::build(config, *loader, previous, &built, &errors);
    for (const auto& e : errors) ADD_FAILURE() << e;
    return ok;
  }
  const proxy::ListenerInfo* chain(const std::string& listener, size_t route) const {
    auto it = built.routes->chains.find(listener);
    if (it == built.routes->chains.end() || route >= it->second.size()) return nullptr;
    return it->second[route].get();
  }
};

std::vector<std::string> names(const proxy::ListenerInfo& info) {
  std::vector<std::string> out;
  for (const auto& f : info.config.filters) {
    out.push_back(f.name + (f.failure_mode == config::FailureMode::kOpen ? "(open)" : ""));
  }
  return out;
}

using Names = std::vector<std::string>;

TEST(RouteChains, ComposesExtendReplaceDisableAndPerRouteConfig) {
  Fixture fx;
  ASSERT_TRUE(fx.build(yaml(kRoutes)));
  const proxy::ListenerInfo& edge = *fx.built.listeners[0];
  EXPECT_EQ(fx.chain("edge", 0), nullptr) << "a route without filters runs the listener chain";

  const proxy::ListenerInfo* per = fx.chain("edge", 1);
  ASSERT_NE(per, nullptr);
  // In place, failure_mode inherited from the listener entry, its own config instance.
  EXPECT_EQ(names(*per), (Names{"request_id", "headers(open)"}));
  EXPECT_EQ(per->filters[0], edge.filters[0]) << "the listener's filter is the same instance";
  EXPECT_NE(per->filters[1], edge.filters[1]) << "the route's entry has its own config";
  EXPECT_EQ(per->route, "per");
  EXPECT_EQ(per->config.name, "edge");
  EXPECT_EQ(per->stats, edge.stats) << "listener settings are the listener's";

  const proxy::ListenerInfo* off = fx.chain("edge", 2);
  ASSERT_NE(off, nullptr);
  EXPECT_EQ(names(*off), (Names{"headers"})) << "request_id removed; failure_mode given wins";

  const proxy::ListenerInfo* only = fx.chain("edge", 3);
  ASSERT_NE(only, nullptr);
  EXPECT_EQ(names(*only), (Names{"headers"}));

  // Listener `side` has no filters: extend appends, disabling what it lacks changes nothing.
  EXPECT_EQ(names(*fx.chain("side", 1)), (Names{"headers"}));
  EXPECT_EQ(names(*fx.chain("side", 2)), (Names{"headers"}));
  EXPECT_EQ(fx.chain("side", 2)->filters[0], fx.chain("edge", 2)->filters[0])
      << "one config instance per route entry, shared by the listeners";
}

TEST(RouteChains, ARebuildKeepsUnchangedRouteChainsAndRebuildsChangedOnes) {
  Fixture fx;
  ASSERT_TRUE(fx.build(yaml(kRoutes)));
  Built first = fx.built;
  std::string changed = kRoutes;
  changed.replace(changed.find("X-A: r"), 6, "X-A: s");
  ASSERT_TRUE(fx.build(yaml(changed), &first));
  EXPECT_EQ(fx.built.listeners[0], first.listeners[0]) << "the listener itself is unchanged";
  EXPECT_NE(fx.chain("edge", 1), first.routes->chains.at("edge")[1].get()) << "per changed";
  EXPECT_EQ(fx.chain("edge", 2), first.routes->chains.at("edge")[2].get()) << "off did not";
  EXPECT_EQ(fx.chain("edge", 3), first.routes->chains.at("edge")[3].get());
  // A route moved to another position keeps its chain: identity is its name.
  std::string moved = std::string(kRoutes).substr(std::string(kRoutes).find("  - name: per"));
  moved += "  - {name: plain, prefix: /plain, cluster: c}\n";
  Built second = fx.built;
  ASSERT_TRUE(fx.build(yaml(moved), &second));
  EXPECT_EQ(fx.chain("edge", 1), second.routes->chains.at("edge")[2].get());
}

TEST(RouteChains, WorkerChainsShareListenerInstancesAndResolveRoutesByIndex) {
  Fixture fx;
  ASSERT_TRUE(fx.build(yaml(kRoutes)));
  auto chain = std::make_shared<proxy::WorkerFilterChain>(fx.built.listeners[0], 0);
  chain->setRoutes(fx.built.routes);
  const auto& routes = fx.built.config->routes;
  EXPECT_EQ(chain->forRoute(nullptr), chain);
  EXPECT_EQ(chain->forRoute(&routes[0]), chain);
  auto per = chain->forRoute(&routes[1]);
  ASSERT_NE(per, chain);
  ASSERT_EQ(per->size(), 2u);
  EXPECT_EQ(per->worker(0), chain->worker(0)) << "request_id: the listener's worker instance";
  EXPECT_NE(per->worker(1), chain->worker(1)) << "headers: the route's own";
  EXPECT_EQ(per->failureMode(1), config::FailureMode::kOpen);
  EXPECT_EQ(chain->forRoute(&routes[2])->size(), 1u);
  EXPECT_EQ(chain->forRoute(&routes[3])->name(0), "headers");
  EXPECT_EQ(per->forRoute(&routes[2]), per) << "a route chain has no route chains of its own";
  // What a stream asks: the same chain, as long as it has a filter to run.
  for (const config::Route* r : {static_cast<const config::Route*>(nullptr), &routes[0],
                                 &routes[1], &routes[2], &routes[3]}) {
    EXPECT_EQ(chain->nonEmptyForRoute(r), chain->forRoute(r));
  }

  // A new table whose chains for `off` and `only` are the same objects: kept, with their
  // instances; `per` changed: rebuilt, still sharing the listener's request_id instance.
  auto off = chain->forRoute(&routes[2]);
  Built first = fx.built;
  std::string changed = kRoutes;
  changed.replace(changed.find("X-A: r"), 6, "X-A: s");
  ASSERT_TRUE(fx.build(yaml(changed), &first));
  ASSERT_EQ(fx.built.listeners[0], first.listeners[0]);
  chain->setRoutes(fx.built.routes);
  const auto& next = fx.built.config->routes;
  EXPECT_EQ(chain->forRoute(&next[2]), off);
  auto per2 = chain->forRoute(&next[1]);
  EXPECT_NE(per2, per);
  EXPECT_EQ(per2->worker(0), chain->worker(0));
  // The old route chain still works for a request that holds it.
  EXPECT_EQ(per->size(), 2u);
  EXPECT_NE(per->worker(1), nullptr);
  // A route of the old table is foreign to the chain now: the stream refuses the request
  // instead of running the listener's filters without the route's.
  bool foreign = false;
  EXPECT_EQ(chain->nonEmptyForRoute(&routes[1], &foreign), chain);
  EXPECT_TRUE(foreign);
  foreign = false;
  EXPECT_EQ(chain->nonEmptyForRoute(&next[1], &foreign), per2);
  EXPECT_FALSE(foreign);
}

TEST(RouteChains, ReplaceWithNoFiltersRunsNoFilterAndAFailingRouteEntryFailsTheBuild) {
  Fixture fx;
  ASSERT_TRUE(fx.build(yaml("  - {name: bare, prefix: /b, cluster: c, filters_mode: replace}\n")));
  ASSERT_NE(fx.chain("edge", 0), nullptr);
  EXPECT_TRUE(fx.chain("edge", 0)->filters.empty());
  auto worker = std::make_shared<proxy::WorkerFilterChain>(fx.built.listeners[0], 0);
  worker->setRoutes(fx.built.routes);
  const config::Route* bare = &fx.built.config->routes[0];
  ASSERT_EQ(worker->forRoute(bare)->size(), 0u);
  EXPECT_EQ(worker->nonEmptyForRoute(bare), nullptr) << "a stream on `bare` runs no filter";
  EXPECT_EQ(worker->nonEmptyForRoute(nullptr), worker) << "the listener's chain has filters";

  std::vector<std::string> errors;
  auto config =
      config::loadString(yaml("  - name: bad\n    prefix: /x\n    cluster: c\n    filters:\n"
                              "      - {name: headers, config: {nope: 1}}\n"),
                         "t.yaml", &errors);
  ASSERT_NE(config, nullptr) << errors.front();
  Built built;
  EXPECT_FALSE(server::build(config, *fx.loader, &fx.built, &built, &errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("t.yaml:16:40: ", 0), 0u) << errors[0];
  EXPECT_NE(errors[0].find("plugin 'headers'"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace sluice::server
