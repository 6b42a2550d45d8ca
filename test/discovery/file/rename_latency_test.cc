// Measures how fast traffic follows the endpoints file through the real binary: the time from
// the rename of the file to the first request served by the new backend. Printed, not asserted
// (timings are measured, not tested); fails only when a change is not followed at all.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test/discovery/file/e2e_fixture.h"

namespace sluice::test {
namespace {

using std::chrono::milliseconds;

// Median time from the rename of the file to the first request served by the new backend, over
// alternating changes A → B → A ...; printed, not asserted.
TEST_F(FileGatewayTest, RenameToTrafficLatency) {
  writeEndpoints("  restapi: " + list({&a_}) + "\n");
  startSluice();
  ASSERT_TRUE(sluice_->ready());
  ASSERT_TRUE(waitUntil([&] { return get("/gateway/restapi/x") == "200 a"; }, milliseconds(5000)));
  RawConnection conn(port_);
  std::mt19937 rng(7);
  std::vector<double> samples;
  int failures = 0;
  for (int change = 0; change < 11; ++change) {
    const EchoBackend* target = change % 2 == 0 ? &b_ : &a_;
    // A random phase against the poller's timer.
    std::this_thread::sleep_for(
        milliseconds(std::uniform_int_distribution<int>(0, intervalMs())(rng)));
    writeEndpoints("  restapi: " + list({target}) + "\n");
    auto renamed = Clock::now();
    std::string name = change % 2 == 0 ? "b" : "a";
    bool seen = false;
    while (!seen && Clock::now() - renamed < std::chrono::seconds(10)) {
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
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - renamed).count();
    samples.push_back(ms);
  }
  EXPECT_EQ(failures, 0);
  std::sort(samples.begin(), samples.end());
  double median = samples[samples.size() / 2];
  std::printf(
      "rename → first request on the new backend, interval_ms %d, %zu changes: median %.1f "
      "ms, min %.1f ms, max %.1f ms\n",
      intervalMs(), samples.size(), median, samples.front(), samples.back());
  RecordProperty("interval_ms", intervalMs());
  RecordProperty("median_ms", std::to_string(median));
}

}  // namespace
}  // namespace sluice::test
