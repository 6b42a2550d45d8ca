#include "test/discovery/testing/recording_host.h"

#include <cstdio>

namespace sluice::testing {
namespace {

std::string text(sluice_str s) { return s.data == nullptr ? "" : std::string(s.data, s.len); }

const char* levelName(sluice_log_level level) {
  switch (level) {
    case SLUICE_LOG_DEBUG:
      return "DEBUG";
    case SLUICE_LOG_INFO:
      return "INFO";
    case SLUICE_LOG_WARN:
      return "WARN";
    default:
      return "ERROR";
  }
}

}  // namespace

std::string endpointsOf(const PublishedSnapshot& s, const std::string& cluster) {
  auto it = s.find(cluster);
  if (it == s.end()) return "-";
  std::string out;
  for (const std::string& e : it->second) out += (out.empty() ? "" : ",") + e;
  return out;
}

RecordingHost::RecordingHost() {
  discovery_api_ = {sizeof(sluice_discovery_host_api), &RecordingHost::publishThunk};
  api_.struct_size = sizeof(sluice_host_api);
  api_.abi_major = SLUICE_ABI_MAJOR;
  api_.abi_minor = SLUICE_ABI_MINOR;
  api_.log = &RecordingHost::logThunk;
  api_.host_ctx = this;
  api_.now_us = []() -> uint64_t { return 0; };
  api_.discovery = &discovery_api_;
}

void RecordingHost::logThunk(const void* ctx, sluice_log_level level, const char* msg, size_t len) {
  if (level == SLUICE_LOG_DEBUG) return;  // the C client's chatter
  auto* self = const_cast<RecordingHost*>(static_cast<const RecordingHost*>(ctx));
  std::string line = std::string(levelName(level)) + " " + std::string(msg, len);
  std::fprintf(stderr, "plugin log: %s\n", line.c_str());
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->logs_.push_back(std::move(line));
  self->changed_.notify_all();
}

int RecordingHost::publishThunk(sluice_discovery_sink* sink,
                                const sluice_discovery_snapshot* snapshot) {
  auto* self = reinterpret_cast<RecordingHost*>(sink);
  PublishedSnapshot copy;
  for (size_t i = 0; i < snapshot->cluster_count; ++i) {
    const sluice_discovered_cluster& c = snapshot->clusters[i];
    std::vector<std::string>& list = copy[text(c.name)];
    for (size_t j = 0; j < c.endpoint_count; ++j) {
      const sluice_endpoint& e = c.endpoints[j];
      std::string entry = text(e.address);
      if (e.weight != 0) entry += " w=" + std::to_string(e.weight);
      if (e.zone.len != 0) entry += " zone=" + text(e.zone);
      for (size_t k = 0; k < e.metadata_count; ++k) {
        entry += " " + text(e.metadata[2 * k]) + "=" + text(e.metadata[2 * k + 1]);
      }
      list.push_back(std::move(entry));
    }
  }
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->published_.push_back(std::move(copy));
  self->times_.push_back(std::chrono::steady_clock::now());
  self->changed_.notify_all();
  return 0;
}

std::vector<PublishedSnapshot> RecordingHost::published() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return published_;
}

size_t RecordingHost::publishCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return published_.size();
}

PublishedSnapshot RecordingHost::last() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return published_.empty() ? PublishedSnapshot() : published_.back();
}

bool RecordingHost::waitFor(const std::function<bool(const PublishedSnapshot&)>& pred,
                            std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout,
                           [&] { return !published_.empty() && pred(published_.back()); });
}

bool RecordingHost::waitForPublish(size_t count, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return published_.size() > count; });
}

std::chrono::steady_clock::time_point RecordingHost::publishTime(size_t n) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return n < times_.size() ? times_[n] : std::chrono::steady_clock::time_point();
}

std::vector<std::string> RecordingHost::logs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return logs_;
}

size_t RecordingHost::countLogs(const std::string& needle) const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const std::string& line : logs_) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

bool RecordingHost::waitForLog(const std::string& needle, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    for (const std::string& line : logs_) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  });
}

}  // namespace sluice::testing
