// Snapshot building (mirror + format → clusters), empty-list protection and the cache file,
// without a server: the tree is fed answers by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "discovery/zookeeper/cache_file.h"
#include "discovery/zookeeper/protection.h"
#include "discovery/zookeeper/snapshot_builder.h"
#include "test/discovery/testing/recording_host.h"
#include "test/harness/env.h"

namespace sluice::zookeeper {
namespace {

// Fills a sluice-layout tree under /r from {cluster → {address → data}}.
void fill(Tree& t, const std::map<std::string, std::map<std::string, std::string>>& registry) {
  auto root = t.resync();
  std::vector<std::string> names;
  for (const auto& entry : registry) names.push_back(entry.first);
  auto clusters = t.onChildren(root[0], Tree::Result::kOk, names);
  for (const auto& req : clusters) {
    const auto& instances = registry.at(req.path.substr(3));
    std::vector<std::string> kids;
    for (const auto& i : instances) kids.push_back(i.first);
    for (const auto& get : t.onChildren(req, Tree::Result::kOk, kids)) {
      t.onData(get, Tree::Result::kOk, instances.at(get.path.substr(get.path.rfind('/') + 1)));
    }
  }
  ASSERT_TRUE(t.complete());
}

std::string show(const std::vector<sdk::DiscoveredCluster>& clusters) {
  std::string out;
  for (const auto& c : clusters) {
    out += (out.empty() ? "" : "; ") + c.name + ":";
    for (const auto& e : c.endpoints) {
      out += " " + e.address + (e.weight != 0 ? "*" + std::to_string(e.weight) : "");
    }
  }
  return out;
}

TEST(SnapshotBuilderTest, MalformedNodesAreSkippedCountedAndLoggedOnce) {
  testing::RecordingHost host;
  auto format = makeSluiceFormat();
  Tree t("/r", format->levels(), true);
  fill(t, {{"restapi",
            {{"10.0.0.1:80", ""},
             {"10.0.0.2:80", R"({"weight": 3})"},
             {"10.0.0.3:80", "{not json"},
             {"nohost", ""}}},
           {"billing", {}},
           {"bad name", {{"10.0.0.9:80", ""}}}});
  SnapshotBuilder builder(*format, host.host(), "zk");
  SnapshotStats stats;
  auto clusters = builder.build(t, &stats);
  EXPECT_EQ(show(clusters), "billing:; restapi: 10.0.0.1:80 10.0.0.2:80*3");
  EXPECT_EQ(stats.clusters, 2u);
  EXPECT_EQ(stats.endpoints, 2u);
  EXPECT_EQ(stats.malformed, 4u);  // bad JSON, bad address, bad cluster name (+ its instance)
  EXPECT_EQ(host.countLogs("skipping malformed node /r/restapi/10.0.0.3:80: bad JSON"), 1u);
  EXPECT_EQ(host.countLogs("skipping malformed node /r/restapi/nohost"), 1u);
  EXPECT_EQ(host.countLogs("skipping 'bad name': not a valid cluster name"), 1u);
  // Built again with nothing changed: same result, nothing logged again.
  builder.build(t, &stats);
  EXPECT_EQ(host.countLogs("skipping malformed node"), 3u);
  EXPECT_EQ(host.countLogs("skipping 'bad name'"), 1u);
}

TEST(SnapshotBuilderTest, DubboHostWithManyInterfacesIsOneEndpoint) {
  testing::RecordingHost host;
  auto format = makeDubboFormat(DubboOptions{});
  Tree t("/dubbo", format->levels(), false);
  auto root = t.resync();
  auto ifaces = t.onChildren(root[0], Tree::Result::kOk, {"a.S", "a.T"});
  for (const auto& req : ifaces) {
    auto prov = t.onChildren(req, Tree::Result::kOk, {"providers"});
    std::string iface = req.path.substr(7);
    t.onChildren(prov[0], Tree::Result::kOk,
                 {"rest%3A%2F%2F10.0.0.1%3A80%2Fapi%2F" + iface + "%3Fweight%3D" +
                      (iface == "a.S" ? "10" : "30"),
                  "rest%3A%2F%2F10.0.0.2%3A80%2Fapi%2F" + iface,
                  "dubbo%3A%2F%2F10.0.0.1%3A20880%2F" + iface});
  }
  ASSERT_TRUE(t.complete());
  SnapshotBuilder builder(*format, host.host(), "zk");
  SnapshotStats stats;
  EXPECT_EQ(show(builder.build(t, &stats)), "api: 10.0.0.1:80*30 10.0.0.2:80*100");
  EXPECT_EQ(stats.skipped, 2u);
  EXPECT_EQ(host.countLogs("skipping"), 0u) << "other protocols are skipped quietly";
}

sdk::DiscoveredCluster cluster(const std::string& name, std::vector<std::string> addresses) {
  sdk::DiscoveredCluster c{name, {}};
  for (auto& a : addresses) c.endpoints.push_back(sdk::Endpoint{a, 0, "", {}});
  return c;
}

TEST(EmptyProtectionTest, HoldsClustersThatWouldEmptyAndReleasesThem) {
  testing::RecordingHost host;
  EmptyProtection p(true, host.host(), "zk");
  EXPECT_EQ(show(p.apply({cluster("a", {"h:1"}), cluster("b", {"h:2"}), cluster("c", {})})),
            "a: h:1; b: h:2; c:");
  // a emptied, b gone entirely, c still empty (never had endpoints: nothing to hold).
  EXPECT_EQ(show(p.apply({cluster("a", {}), cluster("c", {})})), "a: h:1; b: h:2; c:");
  EXPECT_EQ(p.held(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(host.countLogs("cluster 'a' would have no endpoints (no instance registered)"), 1u);
  EXPECT_EQ(host.countLogs("cluster 'b' would have no endpoints (its node is gone)"), 1u);
  p.apply({cluster("a", {}), cluster("c", {})});
  EXPECT_EQ(host.countLogs("would have no endpoints"), 2u) << "logged once per hold";
  EXPECT_EQ(show(p.apply({cluster("a", {"h:3"}), cluster("c", {})})), "a: h:3; b: h:2; c:");
  EXPECT_EQ(p.held(), (std::vector<std::string>{"b"}));
  EXPECT_EQ(host.countLogs("cluster 'a' has instances again"), 1u);
}

TEST(EmptyProtectionTest, OffLetsClustersEmpty) {
  testing::RecordingHost host;
  EmptyProtection p(false, host.host(), "zk");
  p.apply({cluster("a", {"h:1"}), cluster("b", {"h:2"})});
  EXPECT_EQ(show(p.apply({cluster("a", {})})), "a:");
  EXPECT_TRUE(p.held().empty());
}

TEST(CacheFileTest, RoundTripAndRefusals) {
  std::string path = test::uniqueTmpPath("zk-cache.yaml");
  std::vector<sdk::DiscoveredCluster> clusters = {cluster("billing", {}),
                                                  cluster("restapi", {"10.0.0.1:80"})};
  clusters[1].endpoints.push_back(
      sdk::Endpoint{"[::1]:81", 5, "a", {{"version", "v2"}, {"quote", "say \"hi\": #1"}}});
  clusters[1].endpoints.push_back(sdk::Endpoint{"h:1", 0, "", {{"true", "null"}}});
  std::string error;
  ASSERT_TRUE(writeCacheFile(path, clusters, "test cache", &error)) << error;
  std::string text = test::readFile(path);
  EXPECT_EQ(text,
            "# test cache\n"
            "clusters:\n"
            "  billing: []\n"
            "  restapi:\n"
            "    - {address: \"10.0.0.1:80\"}\n"
            "    - {address: \"[::1]:81\", weight: 5, zone: \"a\", metadata: {\"version\": \"v2\", "
            "\"quote\": \"say \\\"hi\\\": #1\"}}\n"
            "    - {address: \"h:1\", metadata: {\"true\": \"null\"}}\n");
  std::vector<sdk::DiscoveredCluster> back;
  ASSERT_TRUE(readCacheFile(path, &back, &error)) << error;
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(show(back), "billing:; restapi: 10.0.0.1:80 [::1]:81*5 h:1");
  EXPECT_EQ(back[1].endpoints[2].metadata, clusters[1].endpoints[2].metadata);
  EXPECT_EQ(back[1].endpoints[1].zone, "a");
  EXPECT_EQ(back[1].endpoints[1].metadata, clusters[1].endpoints[1].metadata);

  EXPECT_FALSE(readCacheFile(path + ".missing", &back, &error));
  ASSERT_TRUE(test::writeFile(path, "clusters:\n  restapi: [nohost]\n"));
  EXPECT_FALSE(readCacheFile(path, &back, &error));
  EXPECT_NE(error.find("missing port"), std::string::npos) << error;
  ASSERT_TRUE(test::writeFile(path, "clusters: {restapi: [10.0.0.1:80"));
  EXPECT_FALSE(readCacheFile(path, &back, &error));
  EXPECT_FALSE(writeCacheFile("/nonexistent-dir/cache.yaml", clusters, "", &error));
}

}  // namespace
}  // namespace sluice::zookeeper
