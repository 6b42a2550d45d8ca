#include "discovery/zookeeper/discovery.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <utility>

#include "discovery/zookeeper/cache_file.h"

namespace sluice::zookeeper {
namespace {

using std::chrono::milliseconds;

bool sameEndpoint(const sdk::Endpoint& a, const sdk::Endpoint& b) {
  return a.address == b.address && a.weight == b.weight && a.zone == b.zone &&
         a.metadata == b.metadata;
}

bool sameSnapshot(const std::vector<sdk::DiscoveredCluster>& a,
                  const std::vector<sdk::DiscoveredCluster>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].endpoints.size() != b[i].endpoints.size()) return false;
    for (size_t j = 0; j < a[i].endpoints.size(); ++j) {
      if (!sameEndpoint(a[i].endpoints[j], b[i].endpoints[j])) return false;
    }
  }
  return true;
}

size_t countEndpoints(const std::vector<sdk::DiscoveredCluster>& clusters) {
  size_t n = 0;
  for (const auto& c : clusters) n += c.endpoints.size();
  return n;
}

std::string nowText() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

ZookeeperDiscovery::ZookeeperDiscovery(const ZookeeperConfig& config, const sdk::Host& host)
    : config_(config),
      host_(host),
      label_(config.servers + (config.root == "/" ? "" : config.root)),
      format_(makeFormat(config)),
      tree_(config.root, format_->levels(), format_->readsLeafData()),
      session_(config, loop_, host, label_,
               Session::Events{[this](bool) {
                                 config_.metrics.connected.set(1);
                                 watch_.onConnected();
                                 if (registrar_) registrar_->onConnected();
                               },
                               [this] { config_.metrics.connected.set(0); },
                               [this] {
                                 config_.metrics.connected.set(0);
                                 config_.metrics.session_expirations.inc();
                               },
                               [this](const std::string& path) {
                                 watch_.onWatch(path);
                                 if (registrar_) registrar_->onWatch(path);
                               }}),
      watch_(tree_, session_, loop_, host, label_, [this] { onTreeChanged(); }),
      builder_(*format_, host, label_),
      protection_(config.empty_protection, host, label_) {
  if (config.register_self) registrar_.emplace(*config.register_self, session_, host, label_);
}

ZookeeperDiscovery::~ZookeeperDiscovery() { stop(); }

bool ZookeeperDiscovery::start(const sdk::Sink& sink) {
  sink_.emplace(sink);
  started_ = true;
  loop_.start();
  loop_.post([this] { session_.open(); });
  bool published;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    published = published_cv_.wait_for(lock, milliseconds(config_.initial_wait_ms),
                                       [this] { return first_published_; });
  }
  if (!published) loop_.runSync([this] { publishFromCache(); });
  return true;
}

void ZookeeperDiscovery::stop() {
  if (!started_) return;
  started_ = false;
  loop_.runSync([this] {
    if (publish_timer_ != 0) loop_.cancel(publish_timer_);
    publish_timer_ = 0;
    session_.close();  // ends the session: our ephemeral nodes go now, not a timeout later
  });
  loop_.stop();
  session_.close();  // in case the loop had stopped already
  config_.metrics.connected.set(0);
}

ZookeeperDiscovery::Status ZookeeperDiscovery::status() {
  Status out;
  loop_.runSync([&] {
    out = status_;
    out.connected = session_.connected();
    out.session_id = session_.sessionId();
    out.held = protection_.held();
    if (registrar_) out.registered = registrar_->paths();
  });
  return out;
}

bool ZookeeperDiscovery::clientId(clientid_t* id) {
  bool ok = false;
  loop_.runSync([&] { ok = session_.clientId(id); });
  return ok;
}

void ZookeeperDiscovery::onTreeChanged() {
  if (tree_.dirty()) {
    tree_.clearDirty();
    auto now = Loop::Clock::now();
    if (!dirty_) first_change_ = now;
    last_change_ = now;
    dirty_ = true;
  }
  maybePublish();
}

void ZookeeperDiscovery::maybePublish() {
  if (!tree_.complete() || (!dirty_ && published_from_zk_)) return;
  auto now = Loop::Clock::now();
  auto due = now;
  if (published_from_zk_) {
    due = std::min(last_change_ + milliseconds(config_.debounce_ms),
                   first_change_ + milliseconds(ZookeeperConfig::kMaxPublishDelayMs));
  }
  if (now >= due) {
    if (publish_timer_ != 0) loop_.cancel(publish_timer_);
    publish_timer_ = 0;
    publishNow();
    return;
  }
  if (publish_timer_ != 0) loop_.cancel(publish_timer_);
  publish_timer_ = loop_.runAt(due, [this] {
    publish_timer_ = 0;
    maybePublish();
  });
}

void ZookeeperDiscovery::publishNow() {
  SnapshotStats stats;
  std::vector<sdk::DiscoveredCluster> built = builder_.build(tree_, &stats);
  std::vector<sdk::DiscoveredCluster> out = protection_.apply(std::move(built));
  dirty_ = false;
  bool first = !published_from_zk_;
  published_from_zk_ = true;
  status_.last = stats;
  config_.metrics.malformed.set(static_cast<int64_t>(stats.malformed));
  config_.metrics.skipped.set(static_cast<int64_t>(stats.skipped));
  if (!first && !status_.from_cache && last_published_ && sameSnapshot(*last_published_, out)) {
    return;  // e.g. a data change that changes nothing sluice uses
  }
  std::string what = std::to_string(stats.clusters) + " clusters, " +
                     std::to_string(stats.endpoints) + " endpoints from " +
                     (tree_.rootExists() ? config_.root : config_.root + " (missing)");
  if (stats.malformed + stats.skipped > 0) {
    what += " (" + std::to_string(stats.malformed) + " malformed, " +
            std::to_string(stats.skipped) + " skipped nodes)";
  }
  if (!protection_.held().empty()) {
    what += "; " + std::to_string(protection_.held().size()) + " clusters held";
  }
  status_.from_cache = false;
  publish(out, what);
  writeCache(out);
}

void ZookeeperDiscovery::publishFromCache() {
  if (published_any_) return;
  if (config_.cache_file.empty()) {
    host_.log(sdk::LogLevel::kWarn,
              label_ + ": no answer from ZooKeeper within " +
                  std::to_string(config_.initial_wait_ms) +
                  " ms; starting without its clusters, they appear when it answers");
    return;
  }
  std::vector<sdk::DiscoveredCluster> cached;
  std::string error;
  if (!readCacheFile(config_.cache_file, &cached, &error)) {
    host_.log(sdk::LogLevel::kWarn, label_ + ": no answer from ZooKeeper within " +
                                        std::to_string(config_.initial_wait_ms) +
                                        " ms, and the cache file is unusable: " + error);
    return;
  }
  std::sort(cached.begin(), cached.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<sdk::DiscoveredCluster> out = protection_.apply(std::move(cached));
  status_.from_cache = true;
  last_cached_ = out;
  publish(out, std::to_string(out.size()) + " clusters, " + std::to_string(countEndpoints(out)) +
                   " endpoints from the cache file " + config_.cache_file +
                   " (ZooKeeper did not answer within " + std::to_string(config_.initial_wait_ms) +
                   " ms)");
}

void ZookeeperDiscovery::publish(const std::vector<sdk::DiscoveredCluster>& clusters,
                                 const std::string& what) {
  last_published_ = clusters;
  published_any_ = true;
  ++status_.publishes;
  config_.metrics.publications.inc();
  if (sink_->publish(clusters)) {
    host_.log(sdk::LogLevel::kInfo, label_ + ": published " + what);
  } else {
    host_.log(sdk::LogLevel::kError, label_ + ": sluice refused the snapshot (" + what + ")");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  first_published_ = true;
  published_cv_.notify_all();
}

void ZookeeperDiscovery::writeCache(const std::vector<sdk::DiscoveredCluster>& clusters) {
  if (config_.cache_file.empty()) return;
  if (last_cached_ && sameSnapshot(*last_cached_, clusters)) return;
  std::string error;
  std::string comment = "sluice zookeeper discovery cache: servers " + config_.servers +
                        ", format " + formatName(config_.format) + ", root " + config_.root +
                        ", written " + nowText();
  if (writeCacheFile(config_.cache_file, clusters, comment, &error)) {
    last_cached_ = clusters;
  } else {
    host_.log(sdk::LogLevel::kWarn, label_ + ": cannot write the cache file: " + error);
  }
}

}  // namespace sluice::zookeeper
