// End to end through the real binary: the `file` discovery plugin drives the host set of a
// context-path cluster while clients keep sending requests on keep-alive connections.
//
// Proves the run-time host-set model: the file's host list becomes the cluster's host set with
// no restart and no failed request; a cluster added to the file starts answering; a cluster
// removed from it is emptied (503), not deleted (404); a broken or deleted file changes nothing;
// weights apply. Also: a missing or broken file at start is refused with a clear message.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "test/discovery/file/e2e_fixture.h"

namespace sluice::test {
namespace {

using std::chrono::milliseconds;

TEST_F(FileGatewayTest, HostSetFollowsTheFileWithNoFailedRequest) {
  writeEndpoints("  restapi: " + list({&a_}) + "\n");
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  // The snapshot is applied on the main loop right after start; wait for it.
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "200 a"; }, milliseconds(5000)))
      << get("/gateway/restapi/x");
  EXPECT_EQ(burst("/gateway/restapi/users/7", 30), (std::map<std::string, int>{{"a", 30}}));
  EXPECT_EQ(get("/gateway/billing/x"), "404 ");  // no such cluster yet

  // A → B + C while two clients send requests back to back on keep-alive connections.
  ClientLoop loop(port_, "/gateway/restapi/loop/", 2);
  ASSERT_TRUE(waitUntil([&] { return loop.total() > 100; }, milliseconds(5000)));
  auto renamed = Clock::now();
  writeEndpoints("  restapi: " + list({&b_, &c_}) + "\n");
  ASSERT_TRUE(waitUntil(
      [&] {
        auto s = loop.served();
        return s["b"] > 0 && s["c"] > 0 &&
               Clock::now() - loop.lastServedBy("a") > milliseconds(300);
      },
      milliseconds(5000)))
      << "traffic did not move to b and c";
  auto moved = loop.lastServedBy("a") - renamed;
  std::printf("last response from a: %lld ms after the rename\n",
              static_cast<long long>(std::chrono::duration_cast<milliseconds>(moved).count()));
  loop.resetCounts();
  std::this_thread::sleep_for(milliseconds(500));
  loop.stop();
  auto after = loop.served();
  EXPECT_EQ(after["a"], 0);
  EXPECT_GT(after["b"], 0);
  EXPECT_GT(after["c"], 0);
  EXPECT_LE(std::abs(after["b"] - after["c"]), 4) << "round robin over b and c";  // 2 workers
  EXPECT_TRUE(loop.failures().empty()) << loop.failures().size() << " failed of " << loop.total()
                                       << "; first: " << loop.failures().front();
  EXPECT_GT(loop.total(), 200);

  // A cluster added to the file starts answering.
  writeEndpoints("  restapi: " + list({&b_, &c_}) + "\n  billing: " + list({&a_}) + "\n");
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/billing/x") == "200 a"; }, milliseconds(5000)))
      << get("/gateway/billing/x");

  // Removed from the file: emptied (503), not deleted (404).
  writeEndpoints("  restapi: " + list({&b_, &c_}) + "\n");
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/billing/x") == "503 "; }, milliseconds(5000)))
      << get("/gateway/billing/x");
  EXPECT_EQ(countOutput("cluster 'billing' vanished from discovery"), 1u);

  // A broken file changes nothing; sluice's log names the file, line and column.
  writeEndpoints("  restapi: [" + b_.address() + ", 127.0.0.1]\n  billing: " + list({&a_}) + "\n");
  ASSERT_TRUE(sluice_->process().waitForOutput(
      endpoints_ + ":2:" + std::to_string(15 + b_.address().size()) +
          ": invalid address '127.0.0.1'",
      5000))
      << sluice_->process().outputTail();
  auto broken = burst("/gateway/restapi/x", 20);
  EXPECT_EQ(broken["b"] + broken["c"], 20) << "b=" << broken["b"] << " c=" << broken["c"];
  EXPECT_EQ(get("/gateway/billing/x"), "503 ");

  // Deleted: warned once, traffic unchanged.
  ASSERT_EQ(unlink(endpoints_.c_str()), 0);
  ASSERT_TRUE(
      sluice_->process().waitForOutput("No such file or directory; keeping the last", 5000));
  std::this_thread::sleep_for(milliseconds(5 * intervalMs()));
  EXPECT_EQ(countOutput("No such file or directory; keeping the last"), 1u);
  auto deleted = burst("/gateway/restapi/x", 20);
  EXPECT_EQ(deleted["b"] + deleted["c"], 20);

  // Back, and followed again: weights apply, and the emptied cluster fills up again.
  writeEndpoints("  restapi: [{ address: " + b_.address() + ", weight: 3 }, " + c_.address() +
                 "]\n  billing: " + list({&c_}) + "\n");
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/billing/x") == "200 c"; }, milliseconds(5000)))
      << get("/gateway/billing/x");
  // One connection stays on one worker, whose smooth round robin is exact per cycle of 4.
  auto weighted = burst("/gateway/restapi/x", 400);
  EXPECT_NEAR(weighted["b"], 300, 4);
  EXPECT_NEAR(weighted["c"], 100, 4);
  EXPECT_TRUE(sluice_->process().running());
}

// Operator errors at start: a missing file stops sluice with a clear message; --validate reports
// a broken file with its line and column.
TEST_F(FileGatewayTest, MissingOrBrokenFileAtStartIsRefused) {
  auto configWith = [&](const std::string& endpoints) {
    return std::make_unique<TempConfig>(oneSourceConfig(endpoints, freePort(), 100));
  };
  std::string missing = uniqueTmpPath("missing.yaml");
  auto config = configWith(missing);
  Process serve({runfile("core/sluice"), "-c", config->path()});
  EXPECT_NE(serve.waitExit(15000), 0);
  EXPECT_NE(serve.output().find("endpoints file '" + missing +
                                "': No such file or directory (set optional: true to start "
                                "without it)"),
            std::string::npos)
      << serve.output();

  std::string broken = uniqueTmpPath("broken.yaml");
  ASSERT_TRUE(writeFile(broken, "clusters:\n  restapi:\n    - { address: h:1, weight: 0 }\n"));
  auto config2 = configWith(broken);
  Process validate({runfile("core/sluice"), "--validate", "-c", config2->path()});
  EXPECT_EQ(validate.waitExit(15000), 1);
  EXPECT_NE(validate.output().find(broken + ":3:31: weight: expected an integer 1..10000, got '0'"),
            std::string::npos)
      << validate.output();
}

}  // namespace
}  // namespace sluice::test
