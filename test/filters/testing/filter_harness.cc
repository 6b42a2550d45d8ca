#include "test/filters/testing/filter_harness.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include <map>
#include <tuple>

#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::testing {
namespace {

struct PostRegistry {
  std::mutex mu;
  uint64_t next_ref = 1;
  std::map<sluice_stream_ref, FakeStream*> open;  // refs of streams open in any harness
  std::vector<std::tuple<sluice_stream_ref, sluice_post_fn, void*>> queued;
};
PostRegistry& registry() {
  static PostRegistry r;
  return r;
}

}  // namespace

int FilterHarness::post(sluice_stream_ref ref, sluice_post_fn fn, void* arg) {
  PostRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (ref == 0 || ref >= r.next_ref) return -1;
  r.queued.emplace_back(ref, fn, arg);
  return 0;
}

size_t FilterHarness::runPosts() {
  PostRegistry& r = registry();
  std::vector<std::tuple<sluice_stream_ref, sluice_post_fn, void*>> batch;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    batch.swap(r.queued);
  }
  for (auto& [ref, fn, arg] : batch) {
    FakeStream* s = nullptr;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      auto it = r.open.find(ref);
      if (it != r.open.end()) s = it->second;
    }
    fn(arg, s != nullptr ? s->handle() : nullptr);
  }
  return batch.size();
}

FilterHarness::FilterHarness(const sluice_plugin_descriptor* descriptor, const std::string& yaml)
    : hooks_(static_cast<const sluice_filter_plugin*>(descriptor->hooks)) {
  host_.struct_size = sizeof(host_);
  host_.abi_major = SLUICE_ABI_MAJOR;
  host_.abi_minor = SLUICE_ABI_MINOR;
  host_.log = [](const void* ctx, sluice_log_level, const char* msg, size_t len) {
    static_cast<FilterHarness*>(const_cast<void*>(ctx))->logs_.emplace_back(msg, len);
  };
  host_.host_ctx = this;
  host_.now_us = []() -> uint64_t { return 0; };
  host_.config = plugin::configApi();
  host_.filter = FakeStream::api();

  YamlConfig tree(yaml);
  char message[512] = "";
  sluice_error err{message, sizeof(message), 0, 0};
  config_ = hooks_->config_create(&host_, tree.raw(), &err);
  files_ = tree.files();
  if (config_ == nullptr) {
    error_ = message;
    error_line_ = err.line;
    error_column_ = err.column;
    return;
  }
  worker_ = hooks_->worker_create(config_, 0);
}

FilterHarness::~FilterHarness() {
  while (!open_.empty()) finish(*open_.back());
  if (worker_ != nullptr) hooks_->worker_destroy(worker_);
  if (config_ != nullptr && hooks_->config_destroy != nullptr) hooks_->config_destroy(config_);
}

void FilterHarness::open(FakeStream& stream) {
  if (stream.harness == this) return;
  stream.self =
      hooks_->stream_create != nullptr ? hooks_->stream_create(worker_, stream.handle()) : worker_;
  stream.harness = this;
  open_.push_back(&stream);
  PostRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  stream.ref = r.next_ref++;
  r.open[stream.ref] = &stream;
}

sluice_filter_status FilterHarness::requestBody(FakeStream& stream, std::string_view data,
                                                bool end_stream) {
  open(stream);
  if (hooks_->on_request_body == nullptr) return SLUICE_FILTER_CONTINUE;
  stream.in_body_hook = true;
  sluice_filter_status st =
      hooks_->on_request_body(stream.self, stream.handle(), data.data(), data.size(), end_stream);
  stream.in_body_hook = false;
  return st;
}

sluice_filter_status FilterHarness::responseBody(FakeStream& stream, std::string_view data,
                                                 bool end_stream) {
  open(stream);
  if (hooks_->on_response_body == nullptr) return SLUICE_FILTER_CONTINUE;
  stream.in_body_hook = true;
  sluice_filter_status st =
      hooks_->on_response_body(stream.self, stream.handle(), data.data(), data.size(), end_stream);
  stream.in_body_hook = false;
  return st;
}

size_t FilterHarness::fireTimers(FakeStream& stream) {
  std::vector<FakeTimer> due;
  due.swap(stream.timers);
  for (const FakeTimer& t : due) t.fn(t.arg, stream.handle(), t.id);
  return due.size();
}

sluice_filter_status FilterHarness::requestHeaders(FakeStream& stream, bool end_stream) {
  open(stream);
  if (hooks_->on_request_headers == nullptr) return SLUICE_FILTER_CONTINUE;
  return hooks_->on_request_headers(stream.self, stream.handle(), end_stream ? 1 : 0);
}

sluice_filter_status FilterHarness::responseHeaders(FakeStream& stream, bool end_stream) {
  open(stream);
  if (hooks_->on_response_headers == nullptr) return SLUICE_FILTER_CONTINUE;
  return hooks_->on_response_headers(stream.self, stream.handle(), end_stream ? 1 : 0);
}

void FilterHarness::finish(FakeStream& stream) {
  auto it = std::find(open_.begin(), open_.end(), &stream);
  if (it == open_.end()) return;
  open_.erase(it);
  {
    PostRegistry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.open.erase(stream.ref);
  }
  stream.timers.clear();  // the host cancels a stream's timers when it ends
  if (hooks_->on_log != nullptr) hooks_->on_log(stream.self, stream.handle());
  if (hooks_->stream_create != nullptr && hooks_->stream_destroy != nullptr) {
    hooks_->stream_destroy(stream.self);
  }
  stream.self = nullptr;
  stream.harness = nullptr;
}

}  // namespace sluice::testing
