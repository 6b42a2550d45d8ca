// POST /reload?dry_run=1 lists what a reload would change — a cluster's balancer, filters added
// and removed, listeners added and removed — and applies none of it: same version, same
// balancer, same filters, no new socket, the removed listener still serving.
#include <gtest/gtest.h>

#include "test/reload/reload_fixture.h"

namespace sluice::test {
namespace {

constexpr char kRunning[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: headers
        config: { response: { set: { X-Edge: yes } } }
  - name: side
    address: 127.0.0.1:${SIDE}
  - name: old
    address: 127.0.0.1:${OLD}
clusters:
  - name: svc
    balancer: { name: round_robin }
    endpoints: [${A}]
)";

constexpr char kNext[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
  - name: side
    address: 127.0.0.1:${SIDE}
    filters:
      - name: headers
        config: { response: { set: { X-Side: yes } } }
  - name: extra
    address: 127.0.0.1:${EXTRA}
clusters:
  - name: svc
    balancer: { name: least_active }
    endpoints: [${A}]
  - name: more
    endpoints: [${A}]
)";

bool refused(int port) {
  RawConnection conn(port, 1000);
  return !conn.connected();
}

TEST(DryRunTest, ListsChangesAndAppliesNothing) {
  EchoBackend a("a");
  const int side = freePort(), old = freePort(), extra = freePort();
  std::map<std::string, std::string> vars{{"A", a.address()},
                                          {"SIDE", std::to_string(side)},
                                          {"OLD", std::to_string(old)},
                                          {"EXTRA", std::to_string(extra)}};
  ReloadGateway gateway(kRunning, vars);
  ASSERT_TRUE(gateway.ready());
  ASSERT_TRUE(gateway.rewrite(kNext, vars));

  for (int round = 0; round < 2; ++round) {  // twice: a dry run leaves nothing behind
    Response r = gateway.adminReload(/*dry_run=*/true);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_NE(r.body.find("\"ok\": true, \"dry_run\": true, \"version\": 1,"), std::string::npos)
        << r.body;
    for (const char* change : {
             "cluster 'svc': balancer round_robin → least_active",
             "cluster 'more' added (round_robin)",
             "listener 'edge': filters [headers] → []",
             "listener 'side': filters [] → [headers]",
             "listener 'old' removed",
         }) {
      EXPECT_NE(r.body.find(change), std::string::npos) << change << " missing from " << r.body;
    }
    EXPECT_NE(r.body.find("listener 'extra' added on 127.0.0.1:" + std::to_string(extra)),
              std::string::npos)
        << r.body;
    EXPECT_NE(r.body.find("\"errors\": []"), std::string::npos) << r.body;
  }

  // Nothing applied.
  std::map<std::string, uint64_t> stats = adminStats(gateway.adminPort());
  EXPECT_EQ(stats["config_version"], 1u);
  EXPECT_EQ(stats["reloads_ok"], 0u);
  std::string config = adminGet(gateway.adminPort(), "/config");
  EXPECT_NE(config.find("\"version\": 1,"), std::string::npos);
  EXPECT_NE(config.find("name: old"), std::string::npos) << "GET /config shows the running text";
  EXPECT_EQ(clusterStat(gateway.adminPort(), "svc").balancer, "round_robin");
  EXPECT_FALSE(clusterStat(gateway.adminPort(), "more").found);
  EXPECT_EQ(httpGet(gateway.port(), "/svc/x").header("X-Edge"), "yes");
  Response s = httpGet(side, "/svc/x");
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.header("X-Side"), "");
  EXPECT_EQ(httpGet(old, "/svc/x").status, 200) << "the listener a dry run would remove";
  EXPECT_TRUE(refused(extra)) << "a dry run opened the new listener's socket";
  EXPECT_EQ(httpGet(gateway.port(), "/more/x").status, 404);

  // A dry run of a broken config: 400, its errors, and still nothing changes.
  ASSERT_TRUE(gateway.rewrite(std::string(kNext) + "bogus_top_level_key: 1\n", vars));
  Response bad = gateway.adminReload(/*dry_run=*/true);
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("\"dry_run\": true"), std::string::npos) << bad.body;
  EXPECT_NE(bad.body.find("bogus_top_level_key"), std::string::npos) << bad.body;
  EXPECT_EQ(adminStats(gateway.adminPort())["config_version"], 1u);

  // The real reload then does what the dry run said.
  ASSERT_TRUE(gateway.rewrite(kNext, vars));
  ASSERT_EQ(gateway.reload(Trigger::kAdmin), 2u);
  EXPECT_EQ(clusterStat(gateway.adminPort(), "svc").balancer, "least_active");
  EXPECT_EQ(httpGet(extra, "/more/x").status, 200);
  EXPECT_EQ(httpGet(side, "/svc/x").header("X-Side"), "yes");
  EXPECT_EQ(httpGet(gateway.port(), "/svc/x").header("X-Edge"), "");
  EXPECT_TRUE(refused(old));
}

// BUG (core): a dry run that finds errors counts as a failed reload (reloads_failed + 1), becomes
// GET /config's last_reload and logs "reload (admin) refused", while a clean dry run touches none.
TEST(DryRunTest, FailedDryRunIsNotAFailedReload) {
  EchoBackend a("a");
  const int side = freePort(), old = freePort();
  std::map<std::string, std::string> vars{
      {"A", a.address()}, {"SIDE", std::to_string(side)}, {"OLD", std::to_string(old)}};
  ReloadGateway gateway(kRunning, vars);
  ASSERT_TRUE(gateway.ready());
  ASSERT_TRUE(gateway.rewrite(std::string(kRunning) + "bogus_top_level_key: 1\n", vars));
  EXPECT_EQ(gateway.adminReload(/*dry_run=*/true).status, 400);
  EXPECT_EQ(gateway.stat("reloads_failed"), 0u) << "a dry run is not a reload";
  EXPECT_EQ(adminGet(gateway.adminPort(), "/config").find("\"last_reload\""), std::string::npos);
  EXPECT_EQ(gateway.process().output().find("refused; still serving"), std::string::npos);
}

// BUG (core, admin.cc): only "dry_run=1" / "dry_run=true" anywhere in the URI mean a dry run;
// `POST /reload?dry_run`, `?dry_run=yes`, `?dry_run=on` silently apply the config for real.
TEST(DryRunTest, OtherSpellingsOfDryRunNeverApply) {
  EchoBackend a("a");
  const int side = freePort(), old = freePort(), extra = freePort();
  std::map<std::string, std::string> vars{{"A", a.address()},
                                          {"SIDE", std::to_string(side)},
                                          {"OLD", std::to_string(old)},
                                          {"EXTRA", std::to_string(extra)}};
  ReloadGateway gateway(kRunning, vars);
  ASSERT_TRUE(gateway.ready());
  ASSERT_TRUE(gateway.rewrite(kNext, vars));
  for (const char* query : {"?dry_run", "?dry_run=yes", "?dry_run=on"}) {
    Response r = httpRequest(gateway.adminPort(), "POST", std::string("/reload") + query);
    EXPECT_EQ(gateway.stat("config_version"), 1u) << query << " applied the config: " << r.body;
  }
}

}  // namespace
}  // namespace sluice::test
