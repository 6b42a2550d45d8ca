#include "test/filters/testing/filter_harness.h"

#include <algorithm>

#include "test/core/plugin/testing/yaml_config.h"

namespace sluice::testing {

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
  if (hooks_->on_log != nullptr) hooks_->on_log(stream.self, stream.handle());
  if (hooks_->stream_create != nullptr && hooks_->stream_destroy != nullptr) {
    hooks_->stream_destroy(stream.self);
  }
  stream.self = nullptr;
  stream.harness = nullptr;
}

}  // namespace sluice::testing
