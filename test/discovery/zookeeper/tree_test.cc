// The registry mirror (discovery/zookeeper/tree.h) driven answer by answer, with no server:
// which reads it asks for, how answers change it, and when it counts as complete.
#include "discovery/zookeeper/tree.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace sluice::zookeeper {
namespace {

using Op = Tree::Op;
using Result = Tree::Result;

std::string show(const Tree::Requests& reqs) {
  std::string out;
  for (const auto& r : reqs) {
    out += out.empty() ? "" : " ";
    out += (r.op == Op::kChildren ? "ls:" : r.op == Op::kData ? "get:" : "exists:") + r.path;
  }
  return out;
}

std::string leaves(const Tree& t) {
  std::string out;
  t.forEachLeaf(
      [&](const std::vector<std::string>& names, const std::string& path, const std::string& data) {
        out += (out.empty() ? "" : " ") + path + (data.empty() ? "" : "=" + data);
      });
  return out;
}

// A sluice-layout tree under /r: /r/<cluster>/<host:port> with data.
TEST(TreeTest, FirstListingIsCompleteOnlyWhenEverythingAnswered) {
  Tree t("/r", {"", ""}, true);
  auto root = t.resync();
  EXPECT_EQ(show(root), "ls:/r");
  EXPECT_FALSE(t.complete());
  auto clusters = t.onChildren(root[0], Result::kOk, {"b", "a"});
  EXPECT_EQ(show(clusters), "ls:/r/a ls:/r/b");
  auto a = t.onChildren(clusters[0], Result::kOk, {"h1:1", "h2:2"});
  EXPECT_EQ(show(a), "get:/r/a/h1:1 get:/r/a/h2:2");
  EXPECT_TRUE(t.onChildren(clusters[1], Result::kOk, {}).empty());
  EXPECT_TRUE(t.onData(a[0], Result::kOk, "{}").empty());
  EXPECT_FALSE(t.complete());
  t.onData(a[1], Result::kOk, "");
  EXPECT_TRUE(t.complete());
  EXPECT_TRUE(t.dirty());
  EXPECT_EQ(leaves(t), "/r/a/h1:1={} /r/a/h2:2");
  std::vector<std::string> branches;
  t.forEachBranch([&](const std::string& n) { branches.push_back(n); });
  EXPECT_EQ(branches, (std::vector<std::string>{"a", "b"}));
}

TEST(TreeTest, WatchesReReadAndDiff) {
  Tree t("/r", {"", ""}, true);
  auto root = t.resync();
  auto c = t.onChildren(root[0], Result::kOk, {"a"});
  auto a = t.onChildren(c[0], Result::kOk, {"h1:1"});
  t.onData(a[0], Result::kOk, "");
  t.clearDirty();
  // An instance added, another's data changed, then one removed.
  auto relist = t.onWatch("/r/a");
  EXPECT_EQ(show(relist), "ls:/r/a");
  EXPECT_EQ(show(t.onChildren(relist[0], Result::kOk, {"h1:1", "h3:3"})), "get:/r/a/h3:3");
  EXPECT_FALSE(t.complete());
  auto data = t.onWatch("/r/a/h1:1");
  EXPECT_EQ(show(data), "get:/r/a/h1:1");
  t.onData(data[0], Result::kOk, R"({"weight":2})");
  auto h3 = Tree::Request{Op::kData, "/r/a/h3:3", root[0].generation};
  t.onData(h3, Result::kOk, "");
  EXPECT_TRUE(t.complete());
  EXPECT_EQ(leaves(t), R"(/r/a/h1:1={"weight":2} /r/a/h3:3)");
  t.clearDirty();
  relist = t.onWatch("/r/a");
  t.onChildren(relist[0], Result::kOk, {"h3:3"});
  EXPECT_TRUE(t.dirty());
  EXPECT_EQ(leaves(t), "/r/a/h3:3");
  // A watch on a node we do not know is ignored.
  EXPECT_TRUE(t.onWatch("/r/zzz").empty());
}

TEST(TreeTest, MissingRootIsWatchedUntilCreated) {
  Tree t("/r", {"", ""}, true);
  auto root = t.resync();
  auto exists = t.onChildren(root[0], Result::kNoNode, {});
  EXPECT_EQ(show(exists), "exists:/r");
  EXPECT_FALSE(t.complete());
  EXPECT_TRUE(t.onExists(exists[0], Result::kNoNode).empty());
  EXPECT_TRUE(t.complete());  // complete and empty: the registry has nothing
  EXPECT_FALSE(t.rootExists());
  auto created = t.onWatch("/r");
  EXPECT_EQ(show(created), "ls:/r");
  EXPECT_EQ(show(t.onChildren(created[0], Result::kOk, {"a"})), "ls:/r/a");
  // Created between the failed listing and the exists(): listed at once.
  Tree t2("/r", {"", ""}, true);
  auto r2 = t2.resync();
  auto e2 = t2.onChildren(r2[0], Result::kNoNode, {});
  EXPECT_EQ(show(t2.onExists(e2[0], Result::kOk)), "ls:/r");
}

TEST(TreeTest, DeletedAndRecreatedParentsAreReadAgain) {
  Tree t("/r", {"", ""}, true);
  auto root = t.resync();
  auto c = t.onChildren(root[0], Result::kOk, {"a"});
  auto a = t.onChildren(c[0], Result::kOk, {"h1:1"});
  t.onData(a[0], Result::kOk, "");
  // /r/a deleted (its own watch fires first, then the root's).
  auto gone = t.onWatch("/r/a");
  t.onChildren(gone[0], Result::kNoNode, {});
  EXPECT_EQ(leaves(t), "");
  auto rl = t.onWatch("/r");
  EXPECT_TRUE(t.onChildren(rl[0], Result::kOk, {}).empty());
  // Re-created with a new instance.
  rl = t.onWatch("/r");
  auto again = t.onChildren(rl[0], Result::kOk, {"a"});
  EXPECT_EQ(show(again), "ls:/r/a");
  auto h = t.onChildren(again[0], Result::kOk, {"h9:9"});
  t.onData(h[0], Result::kOk, "");
  EXPECT_TRUE(t.complete());
  EXPECT_EQ(leaves(t), "/r/a/h9:9");
  // The root itself deleted: everything goes, and it is watched with exists().
  auto r = t.onWatch("/r");
  EXPECT_EQ(show(t.onChildren(r[0], Result::kNoNode, {})), "exists:/r");
  EXPECT_EQ(leaves(t), "");
}

TEST(TreeTest, ErrorsKeepTheMirrorAndBlockCompletenessUntilRetried) {
  Tree t("/r", {"", ""}, true);
  auto root = t.resync();
  auto c = t.onChildren(root[0], Result::kOk, {"a"});
  auto a = t.onChildren(c[0], Result::kOk, {"h1:1"});
  t.onData(a[0], Result::kOk, "");
  ASSERT_TRUE(t.complete());
  auto relist = t.onWatch("/r/a");
  t.onChildren(relist[0], Result::kError, {});
  EXPECT_FALSE(t.complete());
  EXPECT_EQ(leaves(t), "/r/a/h1:1");  // kept
  auto retry = t.retryFailed();
  EXPECT_EQ(show(retry), "ls:/r/a");
  t.onChildren(retry[0], Result::kOk, {"h1:1"});
  EXPECT_TRUE(t.complete());
}

TEST(TreeTest, ResyncRereadsEverythingAndIgnoresOldAnswers) {
  Tree t("/r", {"", ""}, true);
  auto root = t.resync();
  auto c = t.onChildren(root[0], Result::kOk, {"a", "b"});
  auto a = t.onChildren(c[0], Result::kOk, {"h1:1"});
  auto late = t.onChildren(c[1], Result::kOk, {"h2:2"});  // its data read is still in flight
  t.onData(a[0], Result::kOk, "");
  EXPECT_FALSE(t.complete());
  // The connection drops; a new session re-reads everything.
  auto again = t.resync();
  EXPECT_EQ(show(again), "ls:/r");
  EXPECT_TRUE(t.onData(late[0], Result::kOk, "old").empty());  // previous generation: ignored
  EXPECT_EQ(leaves(t), "/r/a/h1:1 /r/b/h2:2");                 // nothing cleared meanwhile
  auto c2 = t.onChildren(again[0], Result::kOk, {"a"});        // b went away during the outage
  EXPECT_EQ(show(c2), "ls:/r/a");  // kept nodes are read again (their watches may be gone)
  auto a2 = t.onChildren(c2[0], Result::kOk, {"h1:1"});
  EXPECT_EQ(show(a2), "get:/r/a/h1:1");
  t.onData(a2[0], Result::kOk, "");
  EXPECT_TRUE(t.complete());
  EXPECT_EQ(leaves(t), "/r/a/h1:1");
}

TEST(TreeTest, DubboLevelsKeepOnlyProvidersAndReadNoData) {
  Tree t("/dubbo", {"", "providers", ""}, false);
  auto root = t.resync();
  auto ifaces = t.onChildren(root[0], Result::kOk, {"com.a.S", "com.b.T"});
  EXPECT_EQ(show(ifaces), "ls:/dubbo/com.a.S ls:/dubbo/com.b.T");
  auto prov = t.onChildren(ifaces[0], Result::kOk, {"configurators", "providers", "consumers"});
  EXPECT_EQ(show(prov), "ls:/dubbo/com.a.S/providers");
  EXPECT_TRUE(t.onChildren(ifaces[1], Result::kOk, {"routers"}).empty());
  EXPECT_TRUE(t.onChildren(prov[0], Result::kOk, {"rest%3A%2F%2Fh%3A1%2Fx%2FS"}).empty());
  EXPECT_TRUE(t.complete());
  EXPECT_EQ(leaves(t), "/dubbo/com.a.S/providers/rest%3A%2F%2Fh%3A1%2Fx%2FS");
  // `providers` appears later under com.b.T: the interface's child watch lists it.
  auto w = t.onWatch("/dubbo/com.b.T");
  EXPECT_EQ(show(t.onChildren(w[0], Result::kOk, {"providers", "routers"})),
            "ls:/dubbo/com.b.T/providers");
}

TEST(TreeTest, ChrootStyleRootSlash) {
  Tree t("/", {"", ""}, true);
  auto root = t.resync();
  EXPECT_EQ(show(t.onChildren(root[0], Result::kOk, {"a"})), "ls:/a");
}

}  // namespace
}  // namespace sluice::zookeeper
