#include "filters/concurrency_limit/concurrency_limit.h"

#include <memory>
#include <mutex>

namespace sluice::filters::concurrency_limit {
namespace {

constexpr size_t kMaxNames = 65536;
// In the gateway's own error format (core/proxy/local_reply.cc).
constexpr char kBody[] =
    "{\"status\":503,\"error\":\"Service Unavailable\",\"detail\":\"concurrency limit reached\"}\n";

const char* perName(Per per) {
  switch (per) {
    case Per::kRoute:
      return "route";
    case Per::kCluster:
      return "cluster";
    case Per::kListener:
      return "listener";
  }
  return "route";
}

}  // namespace

std::atomic<int64_t>* sharedCounter(Per per, std::string_view name) {
  // Lives as long as this .so: a reload that keeps the library keeps the counts.
  static std::mutex mu;
  static std::unordered_map<std::string, std::unique_ptr<std::atomic<int64_t>>> counters;
  static std::atomic<int64_t> overflow{0};
  std::string key = std::string(perName(per)) + " " + std::string(name);
  std::lock_guard<std::mutex> lock(mu);
  auto it = counters.find(key);
  if (it != counters.end()) return it->second.get();
  if (counters.size() >= kMaxNames) return &overflow;
  auto& slot = counters[key];
  slot = std::make_unique<std::atomic<int64_t>>(0);
  return slot.get();
}

ConcurrencyLimitConfig::ConcurrencyLimitConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"max", "per", "retry_after"});
  if (!node.has("max")) node.fail("'max' is required (in-flight requests per key)");
  max = node["max"].asInt(1, 1000000000);
  std::string p = node.getString("per", "route");
  if (p == "route") {
    per = Per::kRoute;
  } else if (p == "cluster") {
    per = Per::kCluster;
  } else if (p == "listener") {
    per = Per::kListener;
  } else {
    node["per"].fail("expected route, cluster or listener");
  }
  retry_after_s = static_cast<uint64_t>(node.getInt("retry_after", 1, 0, 86400));
  if (retry_after_s != 0) retry_after = std::to_string(retry_after_s);

  sdk::Metrics metrics(host);
  admitted = metrics.counter("requests_total", "Requests through a concurrency_limit entry.",
                             {{"per", perName(per)}, {"result", "admitted"}});
  rejected = metrics.counter("requests_total", "Requests through a concurrency_limit entry.",
                             {{"per", perName(per)}, {"result", "rejected"}});
  in_flight = metrics.gauge("in_flight", "Requests holding a slot of a concurrency_limit entry.",
                            {{"per", perName(per)}});
}

std::atomic<int64_t>* ConcurrencyLimitWorker::counter(std::string_view name) {
  if (last_ != nullptr && name == last_name_) return last_;
  std::atomic<int64_t>* c = nullptr;
  auto it = cache_.find(std::string(name));
  if (it != cache_.end()) {
    c = it->second;
  } else {
    c = sharedCounter(config_.per, name);
    // Bounded like the registry: a worker that has seen too many names stops caching.
    if (cache_.size() < kMaxNames) cache_.emplace(std::string(name), c);
  }
  last_name_.assign(name.data(), name.size());
  last_ = c;  // counters are never freed while the library is loaded (sharedCounter)
  return c;
}

sdk::FilterStatus ConcurrencyLimitFilter::onRequestHeaders(sdk::Stream& stream,
                                                           bool /*end_stream*/) {
  if (held_ != nullptr) return sdk::FilterStatus::kContinue;  // already counted
  std::string_view name;
  switch (config_.per) {
    case Per::kRoute:
      name = stream.routeName();
      break;
    case Per::kCluster:
      name = stream.clusterName();
      break;
    case Per::kListener:
      name = stream.listenerName();
      break;
  }
  std::atomic<int64_t>* c = worker_.counter(name);
  if (c->fetch_add(1, std::memory_order_acq_rel) >= config_.max) {
    c->fetch_sub(1, std::memory_order_acq_rel);
    config_.rejected.inc();
    if (config_.retry_after.empty()) {
      stream.sendLocalReply(503, kBody, "application/json");
    } else {
      stream.sendLocalReply(503, kBody, "application/json", {{"Retry-After", config_.retry_after}});
    }
    return sdk::FilterStatus::kStop;
  }
  held_ = c;
  config_.in_flight.add(1);
  config_.admitted.inc();
  return sdk::FilterStatus::kContinue;
}

}  // namespace sluice::filters::concurrency_limit

SLUICE_FILTER_PLUGIN_WITH_WORKER("concurrency_limit", "1.0.0",
                                 sluice::filters::concurrency_limit::ConcurrencyLimitConfig,
                                 sluice::filters::concurrency_limit::ConcurrencyLimitWorker,
                                 sluice::filters::concurrency_limit::ConcurrencyLimitFilter)
