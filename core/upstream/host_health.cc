#include "core/upstream/host_health.h"

namespace sluice::upstream {
namespace {

using stats::FamilySpec;
using stats::Kind;

const FamilySpec kHostHealthState{
    Kind::kGauge,
    "sluice_upstream_host_health_state",
    "Active health of each host: 1 for its current state (unknown, healthy, unhealthy).",
    {"cluster", "host", "state"}};
const FamilySpec kHostEjected{Kind::kGauge,
                              "sluice_upstream_host_ejected",
                              "1 while outlier detection has the host ejected.",
                              {"cluster", "host"}};
const FamilySpec kHostEffectiveWeight{
    Kind::kGauge,
    "sluice_upstream_host_effective_weight",
    "The weight balancers see (slow start applied; x10 scale when slow start is on).",
    {"cluster", "host"}};
const FamilySpec kHostEjections{Kind::kCounter,
                                "sluice_upstream_host_ejections_total",
                                "Outlier ejections by reason (consecutive_5xx, "
                                "consecutive_gateway_failure).",
                                {"cluster", "host", "reason"}};
const FamilySpec kHealthChecks{Kind::kCounter,
                               "sluice_upstream_health_checks_total",
                               "Active health check probes by result (success, failure, timeout).",
                               {"cluster", "host", "result"}};

}  // namespace

const char* activeHealthName(ActiveHealth h) {
  switch (h) {
    case ActiveHealth::kHealthy:
      return "healthy";
    case ActiveHealth::kUnhealthy:
      return "unhealthy";
    case ActiveHealth::kUnknown:
      break;
  }
  return "unknown";
}

HostHealthStats::HostHealthStats(const std::string& cluster, const std::string& host,
                                 stats::Registry& r)
    : ejected(r.sharedGauge(kHostEjected, {cluster, host})),
      effective_weight(r.sharedGauge(kHostEffectiveWeight, {cluster, host})),
      ejections_5xx(r.counter(kHostEjections, {cluster, host, "consecutive_5xx"})),
      ejections_gateway(r.counter(kHostEjections, {cluster, host, "consecutive_gateway_failure"})),
      checks_success(r.counter(kHealthChecks, {cluster, host, "success"})),
      checks_failure(r.counter(kHealthChecks, {cluster, host, "failure"})),
      checks_timeout(r.counter(kHealthChecks, {cluster, host, "timeout"})) {
  for (int i = 0; i < 3; ++i) {
    state[i] = r.sharedGauge(kHostHealthState,
                             {cluster, host, activeHealthName(static_cast<ActiveHealth>(i))});
  }
}

}  // namespace sluice::upstream
