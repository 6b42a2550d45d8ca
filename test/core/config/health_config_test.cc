// `health_check`, `outlier_detection`, `panic_threshold_percent`, `slow_start_ms`.
#include <gtest/gtest.h>

#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::loadErrors;
using testing::loadOk;

std::string withCluster(const std::string& extra) {
  return "listeners: [{name: l, address: '127.0.0.1:8080'}]\n"
         "routes: [{prefix: /, cluster: c}]\n"
         "clusters:\n"
         "  - name: c\n"
         "    endpoints: ['127.0.0.1:9001']\n" +
         extra;
}

TEST(HealthConfigTest, DefaultsWhenAbsent) {
  auto c = loadOk(withCluster(""));
  ASSERT_NE(c, nullptr);
  const Cluster& cl = c->clusters[0];
  EXPECT_FALSE(cl.health_check.enabled);
  EXPECT_FALSE(cl.outlier_detection.enabled);
  EXPECT_EQ(cl.panic_threshold_percent, 50u);
  EXPECT_EQ(cl.slow_start_ms, 0u);
}

TEST(HealthConfigTest, FullBlocks) {
  auto c = loadOk(withCluster(
      "    health_check: {type: http, path: /healthz, port: 9100, host: svc.local,\n"
      "                   expected_statuses: [200-399, 418], interval_ms: 200,\n"
      "                   interval_jitter_ms: 0, timeout_ms: 100, healthy_threshold: 1,\n"
      "                   unhealthy_threshold: 2}\n"
      "    outlier_detection: {consecutive_5xx: 3, consecutive_gateway_failure: 2,\n"
      "                        base_ejection_time_ms: 1000, max_ejection_time_ms: 5000,\n"
      "                        max_ejection_percent: 34}\n"
      "    panic_threshold_percent: 0\n"
      "    slow_start_ms: 10000\n"));
  ASSERT_NE(c, nullptr);
  const Cluster& cl = c->clusters[0];
  const HealthCheck& h = cl.health_check;
  EXPECT_TRUE(h.enabled);
  EXPECT_EQ(h.type, HealthCheck::Type::kHttp);
  EXPECT_EQ(h.path, "/healthz");
  EXPECT_EQ(h.port, 9100u);
  EXPECT_EQ(h.host, "svc.local");
  ASSERT_EQ(h.expected_statuses.size(), 2u);
  EXPECT_EQ(h.expected_statuses[0], std::make_pair(200u, 399u));
  EXPECT_EQ(h.expected_statuses[1], std::make_pair(418u, 418u));
  EXPECT_EQ(h.interval_ms, 200u);
  EXPECT_EQ(h.timeout_ms, 100u);
  EXPECT_EQ(h.healthy_threshold, 1u);
  EXPECT_EQ(h.unhealthy_threshold, 2u);
  const OutlierDetection& o = cl.outlier_detection;
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.consecutive_5xx, 3u);
  EXPECT_EQ(o.consecutive_gateway_failure, 2u);
  EXPECT_EQ(o.base_ejection_time_ms, 1000u);
  EXPECT_EQ(o.max_ejection_time_ms, 5000u);
  EXPECT_EQ(o.max_ejection_percent, 34u);
  EXPECT_EQ(cl.panic_threshold_percent, 0u);
  EXPECT_EQ(cl.slow_start_ms, 10000u);
}

TEST(HealthConfigTest, EmptyBlocksTurnFeaturesOnWithDefaults) {
  auto c = loadOk(withCluster("    health_check: {type: tcp}\n    outlier_detection: {}\n"));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->clusters[0].health_check.enabled);
  EXPECT_EQ(c->clusters[0].health_check.type, HealthCheck::Type::kTcp);
  EXPECT_EQ(c->clusters[0].health_check.expected_statuses[0], std::make_pair(200u, 299u));
  EXPECT_TRUE(c->clusters[0].outlier_detection.enabled);
  EXPECT_EQ(c->clusters[0].outlier_detection.consecutive_5xx, 5u);
}

TEST(HealthConfigTest, InClusterDefaults) {
  auto c = loadOk(
      "listeners: [{name: l, address: '127.0.0.1:8080'}]\n"
      "discovery:\n"
      "  - name: file\n"
      "    config: {path: /x}\n"
      "    cluster_defaults:\n"
      "      health_check: {path: /ping}\n"
      "      outlier_detection: {consecutive_5xx: 2}\n"
      "      slow_start_ms: 500\n");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->discovery[0].cluster_defaults.health_check.enabled);
  EXPECT_EQ(c->discovery[0].cluster_defaults.health_check.path, "/ping");
  EXPECT_EQ(c->discovery[0].cluster_defaults.outlier_detection.consecutive_5xx, 2u);
  EXPECT_EQ(c->discovery[0].cluster_defaults.slow_start_ms, 500u);
}

TEST(HealthConfigTest, BadValuesNameTheirPlace) {
  auto errors = loadErrors(withCluster(
      "    health_check:\n"
      "      type: udp\n"
      "      path: healthz\n"
      "      expected_statuses: [200-99, 700, x]\n"
      "      healthy_threshold: 0\n"
      "      color: red\n"
      "    outlier_detection: {base_ejection_time_ms: 5000, max_ejection_time_ms: 1000,\n"
      "                        max_ejection_percent: 101}\n"
      "    panic_threshold_percent: 150\n"));
  EXPECT_TRUE(hasError(errors, "7:13", "expected http or tcp"));
  EXPECT_TRUE(hasError(errors, "8:13", "starting with '/'"));
  EXPECT_TRUE(hasError(errors, "9:27", "range"));
  EXPECT_TRUE(hasError(errors, "9:35", "outside 100-599"));
  EXPECT_TRUE(hasError(errors, "9:40", "range"));
  EXPECT_TRUE(hasError(errors, "10:26", "0"));
  EXPECT_TRUE(hasError(errors, "11:7", "color"));
  EXPECT_TRUE(hasError(errors, "12:24", "below base_ejection_time_ms"));
  EXPECT_TRUE(hasError(errors, "13:47", "101"));
  EXPECT_TRUE(hasError(errors, "14:30", "150"));
}

}  // namespace
}  // namespace sluice::config
