// rate_limit across reloads: a reload that rebuilds the listener (another filter's config
// changed) keeps the rate_limit entry's buckets — no fresh burst after each reload — while a
// changed rate_limit entry starts with full buckets, as docs/configuration.md says.
#include <gtest/gtest.h>

#include "test/reload/reload_fixture.h"

namespace sluice::test {
namespace {

constexpr char kConfig[] = R"(
workers: 2
admin: { address: 127.0.0.1:${ADMIN} }
plugin_paths: ${PLUGINS}
listeners:
  - name: edge
    address: 127.0.0.1:${PORT}
    filters:
      - name: rate_limit
        config: {rate: 1, per: hour, burst: ${BURST}, key: {header: X-Tenant}, policy: reload}
      - name: headers
        config: { response: { set: { X-Version: "${VERSION}" } } }
clusters:
  - name: svc
    endpoints: [${A}]
)";

TEST(RateLimitReloadTest, BucketsSurviveAReloadUnlessTheEntryChanged) {
  EchoBackend a("a");
  ReloadGateway gateway(kConfig, {{"A", a.address()}, {"BURST", "2"}, {"VERSION", "1"}});
  ASSERT_TRUE(gateway.ready());
  auto get = [&](const std::string& tenant) {
    return httpGet(gateway.port(), "/svc/x", {{"X-Tenant", tenant}});
  };
  EXPECT_EQ(get("acme").status, 200);
  EXPECT_EQ(get("acme").status, 200);
  EXPECT_EQ(get("acme").status, 429);

  // Same rate_limit entry, another filter changed: the listener's chain is rebuilt.
  ASSERT_TRUE(gateway.rewrite(kConfig, {{"BURST", "2"}, {"VERSION", "2"}}));
  ASSERT_NE(gateway.reload(Trigger::kAdmin), 0u);
  Response other = get("globex");
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.header("X-Version"), "2") << "the reload did not rebuild the chain";
  EXPECT_EQ(get("acme").status, 429) << "the reload refilled the bucket";

  // A changed entry (burst 3) has buckets of its own: full again.
  ASSERT_TRUE(gateway.rewrite(kConfig, {{"BURST", "3"}, {"VERSION", "3"}}));
  ASSERT_NE(gateway.reload(Trigger::kSighup), 0u);
  EXPECT_EQ(get("acme").status, 200);
}

}  // namespace
}  // namespace sluice::test
