#include "core/upstream/health/manager.h"

#include <algorithm>
#include <chrono>

#include "core/common/log.h"
#include "core/event/main_thread.h"
#include "core/event/timeval.h"

namespace sluice::upstream::health {
namespace {

constexpr uint64_t kTickMs = 100;
// At most one "not ejected" line per host this often (ms).
constexpr uint64_t kNotEjectedLogMs = 10000;

const stats::FamilySpec kClusterPanic{stats::Kind::kGauge,
                                      "sluice_cluster_panic",
                                      "1 while the cluster's healthy share is below its "
                                      "panic_threshold_percent (balancing over every host).",
                                      {"cluster"}};

// The one manager of the process (main thread), for reportOutlier's posts.
HealthManager* g_manager = nullptr;

void setStateGauges(HostHealth& h) {
  ActiveHealth a = h.active.load(std::memory_order_relaxed);
  for (int i = 0; i < 3; ++i) h.stats.state[i].set(static_cast<int>(a) == i ? 1 : 0);
}

}  // namespace

uint64_t HealthManager::nowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

HealthManager::HealthManager(event_base* base, Republish republish)
    : base_(base), republish_(std::move(republish)), alive_(std::make_shared<bool>(true)) {
  g_manager = this;
  if (base_ != nullptr) {
    tick_ = event_new(base_, -1, EV_PERSIST, &HealthManager::onTick, this);
    timeval tv = event::toTimeval(kTickMs);
    event_add(tick_, &tv);
  }
}

HealthManager::~HealthManager() {
  if (g_manager == this) g_manager = nullptr;
  *alive_ = false;
  checker_.reset();  // joins the checker thread: no more results
  if (tick_ != nullptr) event_free(tick_);
}

HealthChecker& HealthManager::checker() {
  if (checker_ == nullptr) {
    std::weak_ptr<bool> alive = alive_;
    checker_ = std::make_unique<HealthChecker>([this, alive](const std::string& cluster,
                                                             const std::shared_ptr<Host>& host,
                                                             const ProbeResult& result) {
      event::postToMain([this, alive, cluster, host, result] {
        auto a = alive.lock();
        if (a != nullptr && *a) onProbe(cluster, host, result);
      });
    });
  }
  return *checker_;
}

void HealthManager::warm(const ClusterState& c, HostHealth& h) {
  if (c.cfg.slow_start_ms != 0) h.warming_since_ms = std::max<uint64_t>(nowMs(), 1);
}

std::shared_ptr<const HostSet> HealthManager::prepare(const std::string& name,
                                                      const config::Cluster& cfg,
                                                      const HostSet& hosts, uint64_t version) {
  auto [it, created] = clusters_.try_emplace(name);
  ClusterState& c = it->second;
  if (created) c.panic_gauge = stats::defaultRegistry().sharedGauge(kClusterPanic, {name});
  const bool check_was_on = !created && c.cfg.health_check.enabled;
  const bool outlier_was_on = !created && c.cfg.outlier_detection.enabled;
  c.cfg = cfg;

  std::vector<std::shared_ptr<Host>> next;
  next.reserve(hosts.size());
  bool hosts_changed = created || hosts.size() != c.hosts.size();
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::shared_ptr<Host>& h = hosts.at(i).host;
    bool known = std::find(c.hosts.begin(), c.hosts.end(), h) != c.hosts.end();
    if (!known) {
      hosts_changed = true;
      setStateGauges(h->health());
      // Slow start only for hosts added once the cluster is up (not for the first set at
      // start, at a reload's new cluster or at a cluster's discovery): otherwise every host
      // would start at a tenth of its weight together, which balances exactly the same.
      if (!created) warm(c, h->health());
    }
    next.push_back(h);
  }
  c.hosts = std::move(next);

  // Health checking turned off: the verdicts of the old probes no longer hold.
  if (check_was_on && !cfg.health_check.enabled) {
    for (auto& h : c.hosts) {
      h->health().active.store(ActiveHealth::kUnknown, std::memory_order_relaxed);
      h->health().check_successes = h->health().check_failures = 0;
      setStateGauges(h->health());
    }
  }
  if (outlier_was_on && !cfg.outlier_detection.enabled) {
    for (auto& h : c.hosts) {
      if (!h->health().ejected.load()) continue;
      h->health().ejected.store(false);
      h->health().ejected_until_ms.store(0);
      h->health().stats.ejected.set(0);
      SLUICE_LOG(kInfo, "host ", h->address(), " of cluster '", name,
                 "' returned: outlier detection turned off");
    }
  }
  const std::string key = healthCheckKey(cfg.health_check);
  if (cfg.health_check.enabled && base_ != nullptr && (hosts_changed || key != c.check_key)) {
    checker().setTargets(name, cfg.health_check, c.hosts);
  } else if (!cfg.health_check.enabled && checker_ != nullptr && !c.check_key.empty()) {
    checker_->setTargets(name, cfg.health_check, {});
  }
  c.check_key = cfg.health_check.enabled ? key : "";

  // Panic and effective weights.
  size_t usable = 0;
  for (const auto& h : c.hosts) usable += h->healthy() ? 1 : 0;
  bool panic = inPanic(usable, c.hosts.size(), cfg.panic_threshold_percent);
  if (panic != c.panic) {
    if (panic) {
      SLUICE_LOG(kWarn, "cluster '", name, "' in panic: ", usable, " of ", c.hosts.size(),
                 " hosts usable (below ", cfg.panic_threshold_percent,
                 "%): balancing over every host");
    } else {
      SLUICE_LOG(kInfo, "cluster '", name, "' left panic: ", usable, " of ", c.hosts.size(),
                 " hosts usable");
    }
    c.panic = panic;
  }
  c.panic_gauge.set(panic ? 1 : 0);
  std::vector<uint32_t> weights(hosts.size());
  const uint64_t now = nowMs();
  for (size_t i = 0; i < hosts.size(); ++i) {
    HostHealth& h = hosts.at(i).host->health();
    uint32_t w = std::max<uint32_t>(hosts.at(i).weight, 1);
    if (cfg.slow_start_ms != 0) {
      uint64_t since = h.warming_since_ms;
      if (since != 0 && now - since >= cfg.slow_start_ms) h.warming_since_ms = since = 0;
      h.published_step = since == 0 ? 0 : slowStartStep(now - since, cfg.slow_start_ms);
      w = since == 0 ? w * kSlowStartScale : slowStartWeight(w, now - since, cfg.slow_start_ms);
    } else {
      h.warming_since_ms = 0;
    }
    weights[i] = w;
    h.effective_weight.store(w, std::memory_order_relaxed);
    h.stats.effective_weight.set(w);
  }
  return std::make_shared<HostSet>(version, hosts.entries(), panic, weights);
}

void HealthManager::removeCluster(const std::string& name) {
  auto it = clusters_.find(name);
  if (it == clusters_.end()) return;
  if (checker_ != nullptr && !it->second.check_key.empty()) {
    checker_->setTargets(name, it->second.cfg.health_check, {});
  }
  clusters_.erase(it);
}

bool HealthManager::panic(const std::string& cluster) const {
  auto it = clusters_.find(cluster);
  return it != clusters_.end() && it->second.panic;
}

void HealthManager::onProbe(const std::string& name, const std::shared_ptr<Host>& host,
                            const ProbeResult& result) {
  auto it = clusters_.find(name);
  if (it == clusters_.end() || !it->second.cfg.health_check.enabled) return;
  ClusterState& c = it->second;
  if (std::find(c.hosts.begin(), c.hosts.end(), host) == c.hosts.end()) return;  // left
  HostHealth& h = host->health();
  if (result.ok) {
    h.stats.checks_success.inc();
  } else {
    (result.timed_out ? h.stats.checks_timeout : h.stats.checks_failure).inc();
    h.last_failure = result.detail;
  }
  ActiveHealth before = h.active.load(std::memory_order_relaxed);
  if (!applyProbe(h, result.ok, c.cfg.health_check)) return;
  ActiveHealth after = h.active.load(std::memory_order_relaxed);
  setStateGauges(h);
  if (after == ActiveHealth::kUnhealthy) {
    SLUICE_LOG(kWarn, "host ", host->address(), " of cluster '", name, "' unhealthy after ",
               h.check_failures, " failed health check", h.check_failures == 1 ? "" : "s", ": ",
               result.detail);
  } else {
    SLUICE_LOG(kInfo, "host ", host->address(), " of cluster '", name, "' healthy after ",
               h.check_successes, " successful health check", h.check_successes == 1 ? "" : "s",
               before == ActiveHealth::kUnknown ? " (was unknown)" : "");
    if (before == ActiveHealth::kUnhealthy) warm(c, h);
  }
  republish_(name);
}

void HealthManager::reportOutlier(const std::string& cluster, std::shared_ptr<Host> host,
                                  Ejection reason) {
  event::postToMain([cluster, host = std::move(host), reason] {
    if (g_manager != nullptr) g_manager->onOutlier(cluster, host, reason);
  });
}

void HealthManager::onOutlier(const std::string& name, const std::shared_ptr<Host>& host,
                              Ejection reason) {
  auto it = clusters_.find(name);
  if (it == clusters_.end()) return;
  ClusterState& c = it->second;
  const config::OutlierDetection& od = c.cfg.outlier_detection;
  if (!od.enabled) return;
  if (std::find(c.hosts.begin(), c.hosts.end(), host) == c.hosts.end()) return;
  HostHealth& h = host->health();
  if (h.ejected.load()) return;
  const uint32_t streak =
      reason == Ejection::kConsecutiveGateway ? od.consecutive_gateway_failure : od.consecutive_5xx;
  size_t ejected = 0;
  for (const auto& other : c.hosts) ejected += other->health().ejected.load() ? 1 : 0;
  // A fresh streak is needed for the next decision either way.
  h.consecutive_5xx.store(0);
  h.consecutive_gateway.store(0);
  if (ejected + 1 > maxEjectable(c.hosts.size(), od.max_ejection_percent)) {
    // A host that keeps failing while the cap holds reaches its streak again and again (every
    // few requests under load): one line per host per kNotEjectedLogMs, with the count between.
    uint64_t skipped = 0;
    if (!h.not_ejected_log.allow(nowMs(), kNotEjectedLogMs, &skipped)) return;
    SLUICE_LOG(
        kWarn, "host ", host->address(), " of cluster '", name, "' not ejected after ", streak, " ",
        reason == Ejection::kConsecutiveGateway ? "consecutive gateway failures"
                                                : "consecutive 5xx",
        ": max_ejection_percent ", od.max_ejection_percent, "% of ", c.hosts.size(),
        " hosts allows ", maxEjectable(c.hosts.size(), od.max_ejection_percent), " ejected, ",
        ejected, " already are",
        skipped == 0 ? std::string()
                     : " (" + std::to_string(skipped) + " more such streaks since the last line)");
    return;
  }
  const uint64_t now = nowMs();
  // A host that stayed in for max_ejection_time_ms since its last return starts over.
  if (h.last_ejection_end_ms != 0 && now - h.last_ejection_end_ms >= od.max_ejection_time_ms) {
    h.times_ejected.store(0);
  }
  uint32_t times = h.times_ejected.fetch_add(1) + 1;
  uint64_t duration = ejectionDurationMs(od, times);
  h.ejected_until_ms.store(now + duration);
  h.ejected.store(true);
  h.stats.ejected.set(1);
  (reason == Ejection::kConsecutiveGateway ? h.stats.ejections_gateway : h.stats.ejections_5xx)
      .inc();
  SLUICE_LOG(
      kWarn, "host ", host->address(), " of cluster '", name, "' ejected for ", duration,
      " ms after ", streak, " ",
      reason == Ejection::kConsecutiveGateway ? "consecutive gateway failures" : "consecutive 5xx",
      " (ejection ", times, ")");
  republish_(name);
}

void HealthManager::onTick(evutil_socket_t, short, void* arg) {
  static_cast<HealthManager*>(arg)->tick();
}

void HealthManager::tick() {
  const uint64_t now = nowMs();
  std::vector<std::string> dirty;
  for (auto& [name, c] : clusters_) {
    bool changed = false;
    for (const auto& host : c.hosts) {
      HostHealth& h = host->health();
      if (h.ejected.load() && h.ejected_until_ms.load() <= now) {
        h.ejected.store(false);
        h.ejected_until_ms.store(0);
        h.last_ejection_end_ms = now;
        h.consecutive_5xx.store(0);
        h.consecutive_gateway.store(0);
        h.stats.ejected.set(0);
        SLUICE_LOG(kInfo, "host ", host->address(), " of cluster '", name,
                   "' returned after its ejection");
        warm(c, h);
        changed = true;
      }
    }
    if (c.cfg.slow_start_ms != 0) {
      // A warming host whose weight step moved on (or whose window is over).
      for (const auto& host : c.hosts) {
        HostHealth& h = host->health();
        if (h.warming_since_ms == 0) continue;
        changed = changed ||
                  h.published_step != slowStartStep(now - h.warming_since_ms, c.cfg.slow_start_ms);
      }
    }
    if (changed) dirty.push_back(name);
  }
  for (const std::string& name : dirty) republish_(name);
}

}  // namespace sluice::upstream::health
