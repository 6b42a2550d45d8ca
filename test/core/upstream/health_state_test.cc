// The health state machines: probe thresholds, outlier counting, ejection math,
// max_ejection_percent, panic and slow start; and the manager's decisions on top of them.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/upstream/health/manager.h"
#include "core/upstream/health/state.h"
#include "core/upstream/host.h"

namespace sluice::upstream::health {
namespace {

std::shared_ptr<Host> makeHost(const std::string& cluster, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return std::make_shared<Host>(cluster, "127.0.0.1:" + std::to_string(port),
                                reinterpret_cast<sockaddr*>(&a), sizeof(a));
}

config::HealthCheck check(uint32_t healthy, uint32_t unhealthy) {
  config::HealthCheck c;
  c.enabled = true;
  c.healthy_threshold = healthy;
  c.unhealthy_threshold = unhealthy;
  return c;
}

TEST(ActiveHealthTest, UnknownTakesTheFirstVerdict) {
  HostHealth up("c", "a"), down("c", "b");
  EXPECT_TRUE(up.usable());  // unknown is used
  EXPECT_TRUE(applyProbe(up, true, check(3, 3)));
  EXPECT_EQ(up.active.load(), ActiveHealth::kHealthy);
  EXPECT_TRUE(applyProbe(down, false, check(3, 3)));
  EXPECT_EQ(down.active.load(), ActiveHealth::kUnhealthy);
  EXPECT_FALSE(down.usable());
}

TEST(ActiveHealthTest, ThresholdsPreventFlapping) {
  HostHealth h("c", "a");
  config::HealthCheck cfg = check(2, 3);
  applyProbe(h, true, cfg);
  // Two failures, one success, two failures: never three in a row.
  for (bool ok : {false, false, true, false, false}) EXPECT_FALSE(applyProbe(h, ok, cfg));
  EXPECT_EQ(h.active.load(), ActiveHealth::kHealthy);
  EXPECT_TRUE(applyProbe(h, false, cfg));  // the third in a row
  EXPECT_EQ(h.active.load(), ActiveHealth::kUnhealthy);
  EXPECT_EQ(h.check_failures, 3u);
  EXPECT_FALSE(applyProbe(h, true, cfg));
  EXPECT_FALSE(applyProbe(h, false, cfg));
  EXPECT_FALSE(applyProbe(h, true, cfg));
  EXPECT_TRUE(applyProbe(h, true, cfg));  // two successes in a row
  EXPECT_EQ(h.active.load(), ActiveHealth::kHealthy);
}

TEST(OutlierTest, Consecutive5xxFiresOncePerStreak) {
  HostHealth h("c", "a");
  config::OutlierDetection od;
  od.enabled = true;
  od.consecutive_5xx = 3;
  od.consecutive_gateway_failure = 0;
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_HTTP_5XX, od), Ejection::kNone);
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_HTTP_5XX, od), Ejection::kNone);
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_SUCCESS, od), Ejection::kNone);  // resets
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_HTTP_5XX, od), Ejection::kNone);
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_HTTP_5XX, od), Ejection::kNone);
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_RESET, od), Ejection::kConsecutive5xx);
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_HTTP_5XX, od), Ejection::kNone);  // once
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_CANCELLED, od), Ejection::kNone);
}

TEST(OutlierTest, GatewayFailuresAndA5xxInBetween) {
  HostHealth h("c", "a");
  config::OutlierDetection od;
  od.enabled = true;
  od.consecutive_5xx = 0;
  od.consecutive_gateway_failure = 2;
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_CONNECT_FAILURE, od), Ejection::kNone);
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_HTTP_5XX, od), Ejection::kNone);  // it answered
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_TIMEOUT, od), Ejection::kNone);
  EXPECT_EQ(recordOutcome(h, SLUICE_OUTCOME_CONNECT_FAILURE, od), Ejection::kConsecutiveGateway);
}

TEST(OutlierTest, EjectionTimeGrowsAndIsCapped) {
  config::OutlierDetection od;
  od.base_ejection_time_ms = 1000;
  od.max_ejection_time_ms = 2500;
  EXPECT_EQ(ejectionDurationMs(od, 1), 1000u);
  EXPECT_EQ(ejectionDurationMs(od, 2), 2000u);
  EXPECT_EQ(ejectionDurationMs(od, 3), 2500u);
  EXPECT_EQ(ejectionDurationMs(od, 100), 2500u);
}

TEST(OutlierTest, MaxEjectablePercent) {
  EXPECT_EQ(maxEjectable(2, 10), 0u);  // envoyproxy/envoy#3263: Envoy ejects one here
  EXPECT_EQ(maxEjectable(2, 50), 1u);
  EXPECT_EQ(maxEjectable(2, 100), 1u);  // never every host
  EXPECT_EQ(maxEjectable(1, 100), 0u);
  EXPECT_EQ(maxEjectable(3, 50), 1u);
  EXPECT_EQ(maxEjectable(3, 34), 1u);
  EXPECT_EQ(maxEjectable(3, 33), 0u);
  EXPECT_EQ(maxEjectable(10, 10), 1u);
  EXPECT_EQ(maxEjectable(10, 35), 3u);
  EXPECT_EQ(maxEjectable(0, 50), 0u);
}

TEST(PanicTest, BelowTheThreshold) {
  EXPECT_FALSE(inPanic(2, 4, 50));  // exactly half is not below half
  EXPECT_TRUE(inPanic(1, 4, 50));
  EXPECT_TRUE(inPanic(0, 3, 50));
  EXPECT_FALSE(inPanic(0, 3, 0));   // off
  EXPECT_FALSE(inPanic(0, 0, 50));  // no hosts: nothing to balance over
  EXPECT_TRUE(inPanic(9, 10, 100));
}

TEST(SlowStartTest, WeightRampsInTenSteps) {
  EXPECT_EQ(slowStartWeight(1, 0, 10000), 1u);  // a tenth of 1 x 10
  EXPECT_EQ(slowStartWeight(1, 999, 10000), 1u);
  EXPECT_EQ(slowStartWeight(1, 1000, 10000), 2u);
  EXPECT_EQ(slowStartWeight(1, 5000, 10000), 6u);
  EXPECT_EQ(slowStartWeight(1, 9999, 10000), 10u);
  EXPECT_EQ(slowStartWeight(1, 10000, 10000), 10u);
  EXPECT_EQ(slowStartWeight(4, 0, 10000), 4u);
  EXPECT_EQ(slowStartWeight(4, 10000, 10000), 40u);
  EXPECT_EQ(slowStartStep(0, 10000), 1u);
  EXPECT_EQ(slowStartStep(9999, 10000), 10u);
  EXPECT_EQ(slowStartStep(10000, 10000), 0u);
}

// The manager without an event loop (no probes, no timer): prepare() and outlier decisions.
struct ManagerFixture {
  explicit ManagerFixture(size_t n, uint32_t percent = 50, uint32_t panic = 50) {
    cfg.name = "c";
    cfg.outlier_detection.enabled = true;
    cfg.outlier_detection.max_ejection_percent = percent;
    cfg.outlier_detection.base_ejection_time_ms = 1000;
    cfg.panic_threshold_percent = panic;
    std::vector<HostEntry> entries;
    for (size_t i = 0; i < n; ++i) entries.push_back(HostEntry{makeHost("c", 9000 + i), 1, "", {}});
    set = std::make_shared<HostSet>(1, entries);
    current = manager.prepare("c", cfg, *set, 2);
  }
  std::shared_ptr<const HostSet> republishNow() {
    current = manager.prepare("c", cfg, *set, ++version);
    return current;
  }
  size_t usableInView() const {
    size_t n = 0;
    for (size_t i = 0; i < current->cView()->count; ++i) n += current->cView()->hosts[i].healthy;
    return n;
  }

  config::Cluster cfg;
  std::vector<std::string> republished;
  HealthManager manager{nullptr, [this](const std::string& name) { republished.push_back(name); }};
  std::shared_ptr<HostSet> set;
  std::shared_ptr<const HostSet> current;
  uint64_t version = 2;
};

TEST(HealthManagerTest, EjectsAndRepublishesWithinTheLimit) {
  ManagerFixture f(3);
  HealthManager::reportOutlier("c", f.set->at(0).host, Ejection::kConsecutive5xx);
  EXPECT_EQ(f.republished.size(), 1u);
  EXPECT_TRUE(f.set->at(0).host->health().ejected.load());
  EXPECT_EQ(f.set->at(0).host->health().times_ejected.load(), 1u);
  f.republishNow();
  EXPECT_EQ(f.usableInView(), 2u);
  EXPECT_FALSE(f.current->panic());
  // 50% of 3 = 1: a second host stays in.
  HealthManager::reportOutlier("c", f.set->at(1).host, Ejection::kConsecutiveGateway);
  EXPECT_FALSE(f.set->at(1).host->health().ejected.load());
  EXPECT_EQ(f.republished.size(), 1u);
}

TEST(HealthManagerTest, TwoHostsAtTenPercentEjectNone) {
  ManagerFixture f(2, 10);
  HealthManager::reportOutlier("c", f.set->at(0).host, Ejection::kConsecutive5xx);
  EXPECT_FALSE(f.set->at(0).host->health().ejected.load());
}

TEST(HealthManagerTest, PanicBalancesOverEveryHostAndZeroMeansOff) {
  ManagerFixture f(3, 100);
  f.set->at(0).host->health().active.store(ActiveHealth::kUnhealthy);
  f.set->at(1).host->health().active.store(ActiveHealth::kUnhealthy);
  f.republishNow();
  EXPECT_TRUE(f.current->panic());  // 1 of 3 < 50%
  EXPECT_TRUE(f.manager.panic("c"));
  EXPECT_EQ(f.usableInView(), 3u);
  f.set->at(1).host->health().active.store(ActiveHealth::kHealthy);
  f.republishNow();
  EXPECT_FALSE(f.manager.panic("c"));
  EXPECT_EQ(f.usableInView(), 2u);

  ManagerFixture off(2, 100, 0);
  off.set->at(0).host->health().active.store(ActiveHealth::kUnhealthy);
  off.set->at(1).host->health().active.store(ActiveHealth::kUnhealthy);
  off.republishNow();
  EXPECT_FALSE(off.current->panic());
  EXPECT_EQ(off.usableInView(), 0u);  // the balancer finds none: 503 at once
}

TEST(HealthManagerTest, SlowStartOnlyForHostsAddedLater) {
  ManagerFixture f(2);
  f.cfg.slow_start_ms = 60000;
  f.republishNow();
  // The first set is not ramped: every host at full (scaled) weight.
  EXPECT_EQ(f.current->effectiveWeight(0), kSlowStartScale);
  EXPECT_EQ(f.current->effectiveWeight(1), kSlowStartScale);
  std::vector<HostEntry> entries = f.set->entries();
  entries.push_back(HostEntry{makeHost("c", 9100), 1, "", {}});
  f.set = std::make_shared<HostSet>(10, entries);
  f.republishNow();
  EXPECT_EQ(f.current->effectiveWeight(0), kSlowStartScale);
  EXPECT_EQ(f.current->effectiveWeight(2), 1u);  // a new host starts at a tenth
}

TEST(HealthManagerTest, HostLeftOrClusterGoneIsIgnored) {
  ManagerFixture f(3);
  auto stranger = makeHost("c", 9999);
  HealthManager::reportOutlier("c", stranger, Ejection::kConsecutive5xx);
  HealthManager::reportOutlier("nope", f.set->at(0).host, Ejection::kConsecutive5xx);
  EXPECT_FALSE(stranger->health().ejected.load());
  EXPECT_FALSE(f.set->at(0).host->health().ejected.load());
  EXPECT_TRUE(f.republished.empty());
}

}  // namespace
}  // namespace sluice::upstream::health
