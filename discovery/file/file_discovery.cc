#include "discovery/file/file_discovery.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

namespace sluice::discovery {
namespace {

std::string absolutePath(const std::string& path, const sdk::ConfigNode& at) {
  if (!path.empty() && path.front() == '/') return path;
  std::vector<char> buf(4096);
  if (::getcwd(buf.data(), buf.size()) == nullptr) {
    at.fail("cannot make '" + path + "' absolute: getcwd: " + std::strerror(errno));
  }
  std::string dir(buf.data());
  return dir + (dir.back() == '/' ? "" : "/") + path;
}

// Reads and parses the file once, so a broken file stops sluice (and --validate) up front.
void checkFile(const FileDiscoveryConfig& config, const sdk::ConfigNode& at) {
  FileStamp stamp = FileStamp::ofPath(config.path);
  if (!stamp.exists()) {
    if (config.optional && stamp.error == ENOENT) return;
    at.fail("endpoints file '" + config.path + "': " + std::strerror(stamp.error) +
            (stamp.error == ENOENT ? " (set optional: true to start without it)" : ""));
  }
  std::string text;
  std::string error;
  if (!readStable(config.path, &text, &stamp, &error)) {
    at.fail("endpoints file '" + config.path + "' cannot be read: " + error);
  }
  ParsedEndpoints parsed = parseEndpoints(text);
  if (!parsed.ok()) {
    std::string message = "endpoints file refused: " + parsed.errors.front().format(config.path);
    if (parsed.errors.size() > 1) {
      message += " (and " + std::to_string(parsed.errors.size() - 1) + " more errors)";
    }
    at.fail(message);
  }
}

}  // namespace

FileDiscoveryConfig::FileDiscoveryConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"path", "interval_ms", "optional"});
  sdk::ConfigNode path_node = node["path"];
  if (path_node.isNull()) node.fail("missing key 'path' (the endpoints file)");
  std::string raw = path_node.asString();
  if (raw.empty()) path_node.fail("path: expected a file name");
  path = absolutePath(raw, path_node);
  interval_ms = node.getInt("interval_ms", kDefaultIntervalMs, kMinIntervalMs, kMaxIntervalMs);
  optional = node.getBool("optional", false);
  checkFile(*this, path_node);
}

FileDiscovery::FileDiscovery(const FileDiscoveryConfig& config, const sdk::Host& host)
    : config_(config), host_(host), source_(config.path, host) {}

FileDiscovery::~FileDiscovery() { stop(); }

bool FileDiscovery::start(const sdk::Sink& sink) {
  sink_.emplace(sink);
  if (auto clusters = source_.poll()) publish(*clusters);
  thread_ = std::thread([this] { run(); });
  return true;
}

void FileDiscovery::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FileDiscovery::run() {
  const auto interval = std::chrono::milliseconds(config_.interval_ms);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    if (auto clusters = source_.poll()) publish(*clusters);
    lock.lock();
  }
}

void FileDiscovery::publish(const std::vector<sdk::DiscoveredCluster>& clusters) {
  if (!sink_->publish(clusters)) {
    host_.log(sdk::LogLevel::kError,
              "endpoints file " + config_.path + ": sluice refused the snapshot (see its log)");
  }
}

}  // namespace sluice::discovery
