// The resilience keys: retry_policy (and the old top-level retries), circuit_breakers,
// request_timeout_ms, response header limits, deadline headers, route timeout_ms/retry_on;
// defaults, values, and file:line errors for bad values.
#include <gtest/gtest.h>

#include "core/config/config.h"
#include "test/core/config/test_util.h"

namespace sluice::config {
namespace {

using testing::hasError;
using testing::kListener;
using testing::loadErrors;
using testing::loadOk;

TEST(RetryConfig, Defaults) {
  auto c = loadOk(std::string(kListener) + "clusters: [{name: a, endpoints: [h:1]}]\n");
  ASSERT_NE(c, nullptr);
  const Cluster& a = c->clusters[0];
  EXPECT_EQ(a.retry_policy.retries, 1u);
  EXPECT_EQ(a.retry_policy.retry_on, kRetryOnConnectFailure | kRetryOnReset);
  EXPECT_EQ(a.retry_policy.backoff_base_ms, 25u);
  EXPECT_EQ(a.retry_policy.backoff_max_ms, 250u);
  EXPECT_EQ(a.retry_policy.budget_percent, 20u);
  EXPECT_EQ(a.retry_policy.min_retry_concurrency, 3u);
  EXPECT_EQ(a.circuit_breakers.max_requests, 0u);  // unlimited
  EXPECT_EQ(a.request_timeout_ms, 0u);
  EXPECT_EQ(a.max_response_header_bytes, 65536u);
  EXPECT_EQ(a.max_response_header_count, 100u);
  EXPECT_EQ(a.deadline_header, "");
}

TEST(RetryConfig, ValuesAndOverrides) {
  auto c = loadOk(
      "listeners: [{name: edge, address: 127.0.0.1:8080, "
      "trusted_deadline_header: X-Request-Deadline-Ms}]\n"
      "routes: [{prefix: /r/, cluster: a, timeout_ms: 300, retry_on: [5xx]}]\n"
      "clusters:\n"
      "  - name: a\n"
      "    retries: 3\n"
      "    retry_policy: {retry_on: [503, per_try_timeout], backoff_base_ms: 10,\n"
      "                   backoff_max_ms: 80, budget_percent: 50, min_retry_concurrency: 1}\n"
      "    circuit_breakers: {max_connections: 10, max_pending_requests: 5, max_requests: 7,\n"
      "                       max_retries: 2}\n"
      "    request_timeout_ms: 2000\n"
      "    max_response_header_bytes: 1024\n"
      "    max_response_header_count: 20\n"
      "    deadline_header: X-Request-Deadline-Ms\n");
  ASSERT_NE(c, nullptr);
  const Cluster& a = c->clusters[0];
  EXPECT_EQ(a.retry_policy.retries, 3u);  // the old key still sets it
  EXPECT_EQ(a.retry_policy.retry_on, kRetryOn503 | kRetryOnPerTryTimeout);
  EXPECT_EQ(a.retry_policy.backoff_max_ms, 80u);
  EXPECT_EQ(a.circuit_breakers.max_connections, 10u);
  EXPECT_EQ(a.circuit_breakers.max_retries, 2u);
  EXPECT_EQ(a.request_timeout_ms, 2000u);
  EXPECT_EQ(a.deadline_header, "X-Request-Deadline-Ms");
  EXPECT_EQ(c->listeners[0].trusted_deadline_header, "X-Request-Deadline-Ms");
  ASSERT_TRUE(c->routes[0].timeout_ms.has_value());
  EXPECT_EQ(*c->routes[0].timeout_ms, 300u);
  EXPECT_EQ(*c->routes[0].retry_on, kRetryOn502 | kRetryOn503 | kRetryOn504);
  EXPECT_NE(resilienceSettingsKey(a), resilienceSettingsKey(Cluster{}));
}

TEST(RetryConfig, BadValuesHaveLineAndColumn) {
  auto errors = loadErrors(std::string(kListener) +
                           "clusters:\n"
                           "  - name: a\n"
                           "    retry_policy: {retry_on: [sometimes], budget_percent: 150}\n"
                           "    circuit_breakers: {max_request: 1}\n"
                           "    deadline_header: 'not a header'\n"
                           "  - name: b\n"
                           "    retry_policy: {backoff_base_ms: 100, backoff_max_ms: 10}\n");
  EXPECT_TRUE(hasError(errors, "4:31", "unknown retry condition 'sometimes'"));
  EXPECT_TRUE(hasError(errors, "4:59", "budget_percent"));
  EXPECT_TRUE(hasError(errors, "5:24", "unknown key 'max_request' in circuit_breakers"));
  EXPECT_TRUE(hasError(errors, "6:22", "not a header name"));
  EXPECT_TRUE(hasError(errors, "8:19", "backoff_max_ms (10) is below backoff_base_ms (100)"));
  EXPECT_EQ(errors.size(), 5u);
}

TEST(RetryConfig, RetriesGivenTwiceIsRefused) {
  // `retries` is the old spelling of retry_policy.retries: both at once would let one win
  // silently.
  auto errors = loadErrors(std::string(kListener) +
                           "clusters:\n"
                           "  - name: a\n"
                           "    retries: 0\n"
                           "    retry_policy: {retries: 3}\n"
                           "  - name: b\n"
                           "    retries: 2\n"
                           "    retry_policy: {retry_on: [503]}\n");
  EXPECT_TRUE(hasError(errors, "4:14", "clusters[0].retries: also given as retry_policy.retries"));
  EXPECT_EQ(errors.size(), 1u);  // b: `retries` with a policy that does not set it is fine
}

TEST(RetryConfig, ClusterDefaultsTakeTheKeys) {
  auto c = loadOk(std::string(kListener) +
                  "discovery:\n"
                  "  - name: zk\n"
                  "    cluster_defaults: {retry_policy: {retries: 2}, request_timeout_ms: 900,\n"
                  "                       circuit_breakers: {max_requests: 100}}\n");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->discovery[0].cluster_defaults.retry_policy.retries, 2u);
  EXPECT_EQ(c->discovery[0].cluster_defaults.request_timeout_ms, 900u);
  EXPECT_EQ(c->discovery[0].cluster_defaults.circuit_breakers.max_requests, 100u);
}

}  // namespace
}  // namespace sluice::config
