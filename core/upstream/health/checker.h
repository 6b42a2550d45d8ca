// Active health check probes, run on a thread of their own ("health") with its own event_base,
// so proxy load on the workers never delays or starves them. The main thread (HealthManager)
// hands it the targets of each cluster; every probe result is handed to a callback on the
// checker thread, which the manager forwards to the main thread.
//
// A probe: a non-blocking connect to the host (or to `port`), then for `type: http` a
// `GET <path> HTTP/1.1` with `Host`, `User-Agent: sluice-health-check` and
// `Connection: close`. The response is read with the proxy's strict parser
// (core/http/parser.h): the final status decides (an interim 1xx does not, a malformed
// response fails whatever its status), and the rest of the response is read until it ends or
// the server closes (at most 64 KiB) so the probe does not reset the connection;
// `timeout_ms` bounds the whole probe (a verdict already made stands when it expires).
// The next probe starts interval_ms + random(0..interval_jitter_ms) after one ends.
// TLS clusters are probed in plain text (point `port` at a plain health port, or use tcp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/event/worker.h"
#include "core/upstream/health/state.h"
#include "core/upstream/host.h"

namespace sluice::upstream::health {

struct ProbeResult {
  bool ok = false;
  bool timed_out = false;
  std::string detail;  // why it failed ("connect: Connection refused", "status 503", ...)
};

class Probe;

class HealthChecker {
 public:
  // Called on the checker thread after every probe.
  using OnResult = std::function<void(const std::string& cluster, const std::shared_ptr<Host>&,
                                      const ProbeResult&)>;

  // Starts the thread.
  explicit HealthChecker(OnResult on_result);
  // Stops probing and joins the thread.
  ~HealthChecker();
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;

  // Any thread (posted): `cluster` probes exactly `hosts` with `cfg` from now on. A host
  // already probed with the same settings keeps its schedule; others start within about a
  // second. Empty `hosts` stops probing the cluster.
  void setTargets(const std::string& cluster, const config::HealthCheck& cfg,
                  std::vector<std::shared_ptr<Host>> hosts);

 private:
  friend class Probe;
  void applyTargets(const std::string& cluster, const config::HealthCheck& cfg,
                    const std::vector<std::shared_ptr<Host>>& hosts);

  OnResult on_result_;
  std::unique_ptr<event::Worker> thread_;
  // Checker thread only.
  std::map<std::string, std::vector<std::unique_ptr<Probe>>> probes_;
};

}  // namespace sluice::upstream::health
