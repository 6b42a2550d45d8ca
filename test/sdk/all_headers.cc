// Compiled by sdk_warnings_test.sh with -Wall -Wextra -Werror (g++ and clang++), as a plugin
// author's build would: every header of the SDK, and a filter, a balancer and a discovery plugin
// each with every hook overridden and with none overridden, so that every trampoline template
// is instantiated. Not linked into anything; it only has to compile cleanly.
//
// SDK_TEST_ENTRY picks which kind's SLUICE_*_PLUGIN macro defines the one entry point of this
// translation unit (1 filter, 2 balancer, 3 discovery); the other kinds' hook tables are
// instantiated through the SDK's templates directly.
#include "core/api/balancer.h"
#include "core/api/common.h"
#include "core/api/discovery.h"
#include "core/api/filter.h"
#include "core/api/sdk/balancer.h"
#include "core/api/sdk/balancer_impl.h"
#include "core/api/sdk/config.h"
#include "core/api/sdk/discovery.h"
#include "core/api/sdk/discovery_impl.h"
#include "core/api/sdk/filter.h"
#include "core/api/sdk/filter_impl.h"
#include "core/api/sdk/host.h"
#include "core/api/sdk/internal.h"
#include "core/api/sdk/metrics.h"
#include "core/api/sdk/names.h"

#include <cstdint>
#include <string>
#include <string_view>

#ifndef SDK_TEST_ENTRY
#define SDK_TEST_ENTRY 1
#endif

namespace sdk_test {

namespace sdk = sluice::sdk;

// Configs: one reading everything the ConfigNode offers (and declaring metrics), one empty.
struct FullConfig {
  FullConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
    node.requireOnlyKeys({"s", "b", "i", "d", "list", "map", "file"});
    s = node.getString("s", "x");
    b = node.getBool("b", false);
    i = node.getInt("i", 1, 0, 10);
    d = node.getDouble("d", 0.5);
    if (node.has("list")) list = node["list"].asStringList().size();
    if (node.has("map")) list += node["map"].asStringMap().size();
    if (node.has("file"))
      node["file"].dependsOnFile(node["file"].resolvePath(node.getString("file", "")));
    sdk::Metrics metrics(host);
    hits = metrics.counter("hits_total", "Hits.", {{"kind", "test"}});
    level = metrics.gauge("level", "Level.");
    took = metrics.histogram("took_seconds", "Time.", {}, {0.1, 1});
    std::string error;
    ok = sdk::isClusterName(s) && sdk::checkHostPort("127.0.0.1:80", &error) &&
         sdk::isHeaderName("X-A") && sdk::isHeaderValue("v");
  }
  std::string s;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  size_t list = 0;
  bool ok = false;
  sdk::Counter hits;
  sdk::Gauge level;
  sdk::Histogram took;
};
struct EmptyConfig {};

// ---- filters

struct FilterWorker {
  FilterWorker(const FullConfig&, uint32_t worker_index) : index(worker_index) {}
  uint32_t index;
};

class FullFilter : public sdk::Filter {
 public:
  FullFilter(const FullConfig& config, FilterWorker& worker) : config_(config), worker_(worker) {}
  sdk::FilterStatus onRequestHeaders(sdk::Stream& stream, bool end_stream) override {
    config_.hits.inc();
    stream.setHeader(sdk::HeaderMap::kRequest, "X-Worker", std::to_string(worker_.index));
    stream.addHeader(sdk::HeaderMap::kRequest, "X-End", end_stream ? "1" : "0");
    stream.removeHeader(sdk::HeaderMap::kRequest, "X-Drop");
    stream.forEachHeader(sdk::HeaderMap::kRequest, [](std::string_view, std::string_view) {});
    stream.setContext("test.key", stream.routeName());
    if (stream.upstreamPath().size() > 1) stream.setUpstreamPath("/");
    if (stream.context("consumer") && stream.requestHeader("X-A")) {
      stream.sendLocalReply(403, "no\n", "text/plain", {{"X-Why", "test"}});
      return sdk::FilterStatus::kStop;
    }
    stream.bufferBody(sdk::Body::kRequest, 1024);
    sdk::StreamRef ref = stream.ref();
    ref.post([](sdk::Stream* s) {
      if (s != nullptr) s->resume();
    });
    timer_ = stream.armTimer(10);
    return stream.attribute(sdk::Attribute::kTlsSni) ? sdk::FilterStatus::kPause
                                                     : sdk::FilterStatus::kContinue;
  }
  sdk::FilterStatus onRequestBody(sdk::Stream& stream, std::string_view data,
                                  bool end_stream) override {
    if (end_stream) stream.replaceBody(sdk::Body::kRequest, std::string(data) + "!");
    return sdk::FilterStatus::kContinue;
  }
  sdk::FilterStatus onResponseHeaders(sdk::Stream& stream, bool end_stream) override {
    if (stream.responseStatus() >= 500 && !end_stream) return sdk::FilterStatus::kError;
    return sdk::FilterStatus::kContinue;
  }
  sdk::FilterStatus onResponseBody(sdk::Stream& stream, std::string_view data,
                                   bool end_stream) override {
    config_.took.observe(static_cast<double>(data.size() + stream.startTimeUs()) / 1e6);
    return end_stream ? sdk::FilterStatus::kContinue : sdk::FilterStatus::kContinue;
  }
  void onTimer(sdk::Stream& stream, uint64_t id) override {
    if (id == timer_) stream.cancelTimer(id);
    stream.resume();
  }
  void onLog(const sdk::Stream& stream) override { config_.level.set(stream.responseStatus()); }

 private:
  const FullConfig& config_;
  FilterWorker& worker_;
  uint64_t timer_ = 0;
};

class EmptyFilter : public sdk::Filter {};

// ---- balancers

class FullBalancer : public sdk::Balancer {
 public:
  FullBalancer(const FullConfig& config, const sdk::BalancerContext& ctx)
      : config_(config), ctx_(ctx) {}
  void onHostSet(const sdk::HostSet& hosts) override { count_ = hosts.size(); }
  int64_t pick(const sdk::PickContext& ctx) override {
    if (count_ == 0 || ctx.hashKey() == "none") return sdk::kPickNone;
    return static_cast<int64_t>(ctx_.random() % count_);
  }
  void onResult(uint32_t index, sdk::Outcome outcome, uint64_t latency_us) override {
    if (outcome == sdk::Outcome::kSuccess) config_.hits.inc(index + latency_us);
  }

 private:
  const FullConfig& config_;
  sdk::BalancerContext ctx_;
  size_t count_ = 0;
};

class EmptyBalancer : public sdk::Balancer {
 public:
  void onHostSet(const sdk::HostSet&) override {}
  int64_t pick(const sdk::PickContext&) override { return sdk::kPickNone; }
};

// ---- discovery

class FullDiscovery : public sdk::Discovery {
 public:
  FullDiscovery(const FullConfig& config, const sdk::Host& host) : config_(config), host_(host) {}
  bool start(const sdk::Sink& sink) override {
    host_.log(sdk::LogLevel::kInfo, config_.s);
    return sink.publish({{"c", {{"127.0.0.1:80", 1, "z", {{"k", "v"}}}}}});
  }
  void stop() override {}

 private:
  const FullConfig& config_;
  sdk::Host host_;
};

class EmptyDiscovery : public sdk::Discovery {
 public:
  bool start(const sdk::Sink&) override { return true; }
  void stop() override {}
};

// Every hook table, so every trampoline is instantiated whichever macro is used below.
extern const void* const kTables[];
const void* const kTables[] = {
    &sdk::internal::FilterPlugin<FullConfig, FilterWorker, FullFilter>::kHooks,
    &sdk::internal::FilterPlugin<EmptyConfig, sdk::NoWorker, EmptyFilter>::kHooks,
    &sdk::internal::BalancerPlugin<FullConfig, FullBalancer>::kHooks,
    &sdk::internal::BalancerPlugin<EmptyConfig, EmptyBalancer>::kHooks,
    &sdk::internal::DiscoveryPlugin<FullConfig, FullDiscovery>::kHooks,
    &sdk::internal::DiscoveryPlugin<EmptyConfig, EmptyDiscovery>::kHooks,
};

}  // namespace sdk_test

#if SDK_TEST_ENTRY == 1
SLUICE_FILTER_PLUGIN_WITH_WORKER("sdk_test", "1.0.0", sdk_test::FullConfig, sdk_test::FilterWorker,
                                 sdk_test::FullFilter)
#elif SDK_TEST_ENTRY == 2
SLUICE_BALANCER_PLUGIN("sdk_test", "1.0.0", sdk_test::EmptyConfig, sdk_test::EmptyBalancer)
#else
SLUICE_DISCOVERY_PLUGIN("sdk_test", "1.0.0", sdk_test::FullConfig, sdk_test::FullDiscovery)
#endif
