// The shipped plugins (and a test discovery plugin) really loaded with dlopen and driven through
// their hook tables, one test per plugin kind.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "test/core/plugin/loader_fixture.h"

namespace sluice::plugin {
namespace {

// Log lines without their leading timestamp ("2026-...Z "), to compare the rest exactly.
std::string withoutTimestamps(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    size_t space = line.find(' ');
    out += (space == std::string::npos ? line : line.substr(space + 1)) + "\n";
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

using testing::FakeHostSet;
using testing::FakePick;
using testing::FakeStream;

TEST_F(LoaderTest, LoadsAndRunsTheRequestIdAndHeadersFilters) {
  std::string error;
  auto request_id = createFilter(*loader_, ref("request_id", "echo_in_response: true\n"), &error);
  ASSERT_NE(request_id, nullptr) << error;
  auto headers =
      createFilter(*loader_, ref("headers", "request: {set: {X-Gateway: sluice}}\n"), &error);
  ASSERT_NE(headers, nullptr) << error;
  EXPECT_EQ(request_id->name(), "request_id");
  EXPECT_EQ(request_id->library().descriptor().kind, SLUICE_PLUGIN_KIND_FILTER);

  FakeStream stream;
  for (const auto& f : {request_id, headers}) {
    const sluice_filter_plugin& h = f->hooks();
    void* worker = h.worker_create(f->config(), 0);
    ASSERT_NE(worker, nullptr);
    void* self = h.stream_create(worker, stream.handle());
    ASSERT_NE(self, nullptr);
    EXPECT_EQ(h.on_request_headers(self, stream.handle(), 1), SLUICE_FILTER_CONTINUE);
    EXPECT_EQ(h.on_request_body, nullptr);  // the SDK left the unused hooks NULL
    if (h.on_log != nullptr) h.on_log(self, stream.handle());
    h.stream_destroy(self);
    h.worker_destroy(worker);
  }
  std::vector<std::string> ids = stream.values(SLUICE_HEADERS_REQUEST, "X-Request-Id");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_TRUE(std::regex_match(ids[0], std::regex("[0-9a-f-]{36}"))) << ids[0];
  EXPECT_EQ(stream.values(SLUICE_HEADERS_REQUEST, "x-gateway"), std::vector<std::string>{"sluice"});
}

TEST_F(LoaderTest, LoadsAndRunsTheBalancers) {
  FakeHostSet hosts({{"10.0.0.1:80", 3}, {"10.0.0.2:80", 1}, {"10.0.0.3:80", 5, false}});
  for (const char* name : {"round_robin", "random"}) {
    std::string error;
    auto balancer = createBalancer(*loader_, ref(name), &error);
    ASSERT_NE(balancer, nullptr) << error;
    EXPECT_EQ(balancer->library().hostApi()->balancer, testing::FakeHostSet::balancerApi());
    const sluice_balancer_plugin& h = balancer->hooks();
    void* instance = h.instance_create(balancer->config(), "restapi", 0);
    ASSERT_NE(instance, nullptr) << name;
    h.on_host_set(instance, hosts.raw());
    std::map<int64_t, int> counts;
    for (int i = 0; i < 4000; ++i) ++counts[h.pick(instance, FakePick().raw())];
    EXPECT_EQ(counts.count(2), 0u) << name;  // unhealthy
    EXPECT_NEAR(counts[0], 3000, 150) << name;
    EXPECT_NEAR(counts[1], 1000, 150) << name;
    EXPECT_EQ(h.pick(instance, FakePick({0}).raw()), 1) << name;
    EXPECT_EQ(h.on_result, nullptr) << name;
    h.instance_destroy(instance);

    std::string refused;
    EXPECT_EQ(createBalancer(*loader_, ref(name, "weights: fast\n"), &refused), nullptr);
    EXPECT_EQ(refused, prefix(name, balancers_dir_ + "/" + name, "/etc/sluice/sluice.yaml:8:10") +
                           "unknown key 'weights' (no keys allowed)");
  }
}

TEST_F(LoaderTest, LoadsAndRunsADiscoveryPlugin) {
  std::string error;
  auto discovery = createDiscovery(
      *loader_,
      ref("static_list", "zone: z1\nclusters:\n  restapi: [127.0.0.1:9001, 127.0.0.1:9002]\n"),
      &error);
  ASSERT_NE(discovery, nullptr) << error;
  published_.clear();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(discovery->hooks().start(discovery->config(), nullptr), 0);
  discovery->hooks().stop(discovery->config());
  EXPECT_EQ(withoutTimestamps(::testing::internal::GetCapturedStderr()),
            "INFO [main] [plugin static_list] publishing 1\nINFO [main] [plugin static_list] "
            "stopped\n");
  EXPECT_EQ(published_,
            (std::vector<std::string>{"restapi 127.0.0.1:9001 w2 z1 source=static_list",
                                      "restapi 127.0.0.1:9002 w2 z1 source=static_list"}));
  EXPECT_EQ(createDiscovery(*loader_, ref("static_list", "clusters: 1\n"), &error), nullptr);
  EXPECT_NE(error.find("sluice.yaml:8:11: plugin 'static_list' ("), std::string::npos) << error;
}

}  // namespace
}  // namespace sluice::plugin
