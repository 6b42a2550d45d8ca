// slow_down — the example filter of docs/writing-a-filter.md: it paces each caller's requests on
// each worker, delaying a request that comes too early instead of refusing it, and refusing it
// (429 with Retry-After) only when it would have to wait too long.
//
// What it shows, in one file that builds with Bazel (BUILD.bazel) and with plain g++ against the
// installed SDK (Makefile):
//   - per-worker state: each worker keeps its own small table of callers (no locks: a worker
//     object is only ever used on its own thread), bounded by `max_callers`;
//   - the request context: the caller is the `consumer` an auth filter earlier in the chain put
//     there (api_key_auth, basic_auth, jwt_auth), else the client's IP address; the filter puts
//     its own key `slow_down.delay_ms` there (readable in the access log as
//     %{ctx.slow_down.delay_ms});
//   - a timer: a delayed request is paused in on_request_headers (kPause) and resumed from
//     onTimer on its worker, when its turn comes;
//   - a local reply with headers: 429, a JSON body and Retry-After (RFC 9110 §10.2.3);
//   - metrics (ABI 1.1): counters of delayed and refused requests;
//   - onLog, the one hook that runs however a request ends: releases its waiting slot.
//
// The pacing is GCRA (the "virtual scheduling" form of a leaky bucket): every caller has a
// theoretical arrival time `tat`; a request at time t may pass at max(t, tat - (burst - 1) *
// interval), and moves tat on by one interval. The rate is per worker: with `workers: N` a caller
// can get up to N x rate (sluice spreads connections over workers; one keep-alive connection stays
// on one worker). For a limit that holds for the process as a whole, use the rate_limit filter.
//
// YAML:
//   filters:
//     - name: slow_down
//       config:
//         rate: 10                 # requests per second per caller, per worker (> 0; 0.5 = one
//                                  # every 2 s)
//         burst: 1                 # requests a caller may send at once without delay (>= 1)
//         max_delay_ms: 1000       # longest wait; a request that would wait longer gets 429
//         max_waiting: 1000        # delayed requests held per worker; beyond: 429
//         max_callers: 10000       # callers remembered per worker (idle ones are evicted first)
//         exempt_consumers: []     # consumers (from the context) never delayed
//         delay_header: X-Slow-Down-Delay-Ms   # set on the response of a delayed request ("" =
//         off)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/api/sdk/config.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/metrics.h"

namespace slow_down {

using sluice::sdk::ConfigNode;
using sluice::sdk::FilterStatus;
using sluice::sdk::HeaderMap;
using sluice::sdk::Stream;

// Built once per filter entry on the main thread (at start and on every reload), then only read,
// from every worker at once: nothing here changes after the constructor.
struct Config {
  Config(const ConfigNode& node, const sluice::sdk::Host& host) : host(host) {
    node.requireOnlyKeys({"rate", "burst", "max_delay_ms", "max_waiting", "max_callers",
                          "exempt_consumers", "delay_header"});
    double rate = node.getDouble("rate", 10);
    if (!(rate > 0 && rate <= 1e6)) node["rate"].fail("expected a rate from 0 (excluded) to 1e6");
    interval_us = static_cast<uint64_t>(std::llround(1e6 / rate));
    if (interval_us == 0) interval_us = 1;
    burst = static_cast<uint64_t>(node.getInt("burst", 1, 1, 1000000));
    max_delay_us = static_cast<uint64_t>(node.getInt("max_delay_ms", 1000, 0, 3600000)) * 1000;
    max_waiting = static_cast<size_t>(node.getInt("max_waiting", 1000, 0, 1000000));
    max_callers = static_cast<size_t>(node.getInt("max_callers", 10000, 1, 10000000));
    if (node.has("exempt_consumers")) exempt = node["exempt_consumers"].asStringList();
    delay_header = node.getString("delay_header", "X-Slow-Down-Delay-Ms");
    if (!delay_header.empty() && !sluice::sdk::isHeaderName(delay_header)) {
      node["delay_header"].fail("'" + delay_header + "' is not a header name");
    }
    // Declared here, the only place the host accepts declarations; updated from the workers.
    sluice::sdk::Metrics metrics(host);
    delayed = metrics.counter("delayed_total", "Requests held back until their turn.");
    refused = metrics.counter("refused_total", "Requests answered 429.");
  }

  bool isExempt(std::string_view consumer) const {
    return std::find(exempt.begin(), exempt.end(), consumer) != exempt.end();
  }

  sluice::sdk::Host host;
  uint64_t interval_us = 0;  // 1 s / rate
  uint64_t burst = 1;
  uint64_t max_delay_us = 0;
  size_t max_waiting = 0;
  size_t max_callers = 0;
  std::vector<std::string> exempt;
  std::string delay_header;
  sluice::sdk::Counter delayed;
  sluice::sdk::Counter refused;
};

// What the worker decided for one request.
struct Decision {
  bool admitted = false;
  uint64_t delay_us = 0;       // admitted: how long to hold the request
  uint64_t retry_after_s = 0;  // refused: when the caller would be admitted without waiting
};

// One per worker, on the worker's thread only (so: no locks, no atomics).
class Worker {
 public:
  explicit Worker(const Config& config) : config_(config) {}

  // Decides for a request of `caller` arriving at `now_us` (monotonic µs).
  Decision admit(const std::string& caller, uint64_t now_us) {
    Decision d;
    uint64_t tolerance = (config_.burst - 1) * config_.interval_us;
    auto it = tat_.find(caller);
    uint64_t tat = it == tat_.end() ? now_us : std::max(it->second, now_us);
    uint64_t earliest = tat > tolerance ? tat - tolerance : 0;
    uint64_t delay = earliest > now_us ? earliest - now_us : 0;
    if (delay > config_.max_delay_us) {
      // Admitted without waiting too long once `delay - max_delay` has passed.
      d.retry_after_s = ceilSeconds(delay - config_.max_delay_us);
      return d;
    }
    if (delay > 0 && waiting >= config_.max_waiting) {
      d.retry_after_s = ceilSeconds(delay);  // no room to wait: come back when it is your turn
      return d;
    }
    if (it == tat_.end()) {
      if (tat_.size() >= config_.max_callers) evict(now_us);
      it = tat_.emplace(caller, 0).first;
    }
    it->second = tat + config_.interval_us;
    d.admitted = true;
    d.delay_us = delay;
    return d;
  }

  size_t callers() const { return tat_.size(); }
  static uint64_t ceilSeconds(uint64_t us) {
    return std::max<uint64_t>(1, (us + 999999) / 1000000);
  }
  size_t waiting = 0;  // requests paused on this worker right now

 private:
  // Makes room for one more caller: first every caller whose turn has come anyway (forgetting
  // them changes nothing: a new caller is admitted at once), else one arbitrary caller (which
  // then gets a fresh allowance: the price of bounded memory).
  void evict(uint64_t now_us) {
    for (auto i = tat_.begin(); i != tat_.end();) {
      i = i->second <= now_us ? tat_.erase(i) : std::next(i);
    }
    if (tat_.size() >= config_.max_callers) tat_.erase(tat_.begin());
  }

  const Config& config_;
  std::unordered_map<std::string, uint64_t> tat_;  // caller -> theoretical arrival time (µs)
};

// One per request, on its worker's thread.
class Filter : public sluice::sdk::Filter {
 public:
  Filter(const Config& config, Worker& worker) : config_(config), worker_(worker) {}

  FilterStatus onRequestHeaders(Stream& stream, bool /*end_stream*/) override {
    std::string caller;
    if (auto consumer = stream.context("consumer")) {
      if (config_.isExempt(*consumer)) return FilterStatus::kContinue;
      caller = "consumer:" + std::string(*consumer);
    } else {
      caller = "ip:" + clientIp(stream.clientAddress());
    }
    // The request's arrival, or now when a filter before this one held it back for a while.
    uint64_t now = std::max(stream.startTimeUs(), config_.host.nowUs());
    Decision d = worker_.admit(caller, now);
    if (!d.admitted) {
      config_.refused.inc();
      std::string seconds = std::to_string(d.retry_after_s);
      stream.sendLocalReply(
          429,
          "{\"status\":429,\"error\":\"too many requests\",\"retry_after_s\":" + seconds + "}\n",
          "application/json", {{"Retry-After", seconds}});
      return FilterStatus::kStop;
    }
    delay_ms_ = (d.delay_us + 999) / 1000;
    stream.setContext("slow_down.delay_ms", std::to_string(delay_ms_));
    if (delay_ms_ == 0) return FilterStatus::kContinue;
    // Hold the request here (nothing goes upstream) until onTimer resumes it.
    if (stream.armTimer(delay_ms_) == 0) return FilterStatus::kContinue;  // the request is ending
    config_.delayed.inc();
    waiting_ = true;
    ++worker_.waiting;
    return FilterStatus::kPause;
  }

  void onTimer(Stream& stream, uint64_t /*id*/) override {
    release();
    stream.resume();
  }

  FilterStatus onResponseHeaders(Stream& stream, bool /*end_stream*/) override {
    if (delay_ms_ > 0 && !config_.delay_header.empty()) {
      stream.setHeader(HeaderMap::kResponse, config_.delay_header, std::to_string(delay_ms_));
    }
    return FilterStatus::kContinue;
  }

  // Runs once however the request ended; a client that gave up while waiting frees its slot here
  // (the host cancelled the timer).
  void onLog(const Stream& /*stream*/) override { release(); }

 private:
  void release() {
    if (waiting_) --worker_.waiting;
    waiting_ = false;
  }
  // "1.2.3.4:5678" -> "1.2.3.4", "[::1]:5678" -> "::1".
  static std::string clientIp(std::string_view address) {
    if (!address.empty() && address.front() == '[') {
      size_t close = address.find(']');
      return std::string(address.substr(1, close == std::string_view::npos ? close : close - 1));
    }
    return std::string(address.substr(0, address.rfind(':')));
  }

  const Config& config_;
  Worker& worker_;
  uint64_t delay_ms_ = 0;
  bool waiting_ = false;
};

}  // namespace slow_down

SLUICE_FILTER_PLUGIN_WITH_WORKER("slow_down", "1.0.0", slow_down::Config, slow_down::Worker,
                                 slow_down::Filter)
