// Measures how fast traffic follows ZooKeeper through the real binary: the time from a change
// in the registry (backend B registered, A deregistered) to the first request served by B,
// median over alternating changes on one keep-alive connection. Printed, not asserted (timings
// are measured, not tested); fails only when a change is not followed at all. The plugin's
// debounce is its default (20 ms) unless ZK_DEBOUNCE_MS says otherwise.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test/discovery/zookeeper/e2e_fixture.h"

namespace sluice::test {
namespace {

TEST_F(ZkGatewayTest, ChangeToTrafficLatency) {
  const char* env = std::getenv("ZK_DEBOUNCE_MS");
  std::string debounce = env != nullptr ? std::string(env) : "";
  registerBackend("restapi", a_);
  startSluice({zkEntry(zkConfig(debounce.empty() ? "" : "debounce_ms: " + debounce))});
  ASSERT_TRUE(sluice_->ready());
  ASSERT_EQ(get("/gateway/restapi/x"), "200 a");
  RawConnection conn(port_);
  std::mt19937 rng(7);
  std::vector<double> samples;
  int failures = 0;
  for (int change = 0; change < 21; ++change) {
    const EchoBackend& from = change % 2 == 0 ? a_ : b_;
    const EchoBackend& to = change % 2 == 0 ? b_ : a_;
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(50, 150)(rng)));
    auto changed = Clock::now();
    registerBackend("restapi", to);
    deregister("restapi", from);
    std::string name = change % 2 == 0 ? "b" : "a";
    bool seen = false;
    while (!seen && Clock::now() - changed < std::chrono::seconds(10)) {
      Response r = conn.send(buildRequest("GET", "/gateway/restapi/t", {}, "", port_))
                       ? conn.readResponse()
                       : Response{};
      if (!r.complete || r.status != 200) {
        ++failures;
        break;
      }
      seen = r.header("X-Backend") == name;
    }
    ASSERT_TRUE(seen) << "change " << change << " not followed";
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - changed).count());
  }
  EXPECT_EQ(failures, 0);
  std::sort(samples.begin(), samples.end());
  double median = samples[samples.size() / 2];
  std::printf(
      "ZooKeeper change -> first request on the new backend, debounce_ms %s, %zu changes: "
      "median %.1f ms, min %.1f ms, max %.1f ms\n",
      debounce.empty() ? "20 (default)" : debounce.c_str(), samples.size(), median, samples.front(),
      samples.back());
  RecordProperty("median_ms", std::to_string(median));
}

}  // namespace
}  // namespace sluice::test
