// Test helper: drives a filter plugin through its C hook table exactly as the core does —
// config_create (with the host's real config accessors over YAML text), worker_create,
// stream_create, hooks, on_log, stream_destroy — without dlopen. Single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/filter.h"
#include "core/plugin/config_node.h"
#include "test/filters/testing/fake_stream.h"

namespace sluice::testing {

class FilterHarness {
 public:
  // Runs config_create on `yaml` ("" = no config block), then worker_create for worker 0.
  FilterHarness(const sluice_plugin_descriptor* descriptor, const std::string& yaml);
  ~FilterHarness();
  FilterHarness(const FilterHarness&) = delete;
  FilterHarness& operator=(const FilterHarness&) = delete;

  // False when config_create refused; then error(), errorLine() and errorColumn() say why.
  bool configured() const { return config_ != nullptr; }
  const std::string& error() const { return error_; }
  uint32_t errorLine() const { return error_line_; }
  uint32_t errorColumn() const { return error_column_; }
  const std::vector<std::string>& logs() const { return logs_; }
  const sluice_filter_plugin& hooks() const { return *hooks_; }

  // Hooks for `stream` (stream_create on first use). A NULL hook reads as CONTINUE.
  sluice_filter_status requestHeaders(FakeStream& stream, bool end_stream = true);
  sluice_filter_status responseHeaders(FakeStream& stream, bool end_stream = true);
  // Body hooks (ABI 1.2 semantics for a filter that asked buffer_body: pass the whole body
  // once with end_stream true; body_replace works during the call).
  sluice_filter_status requestBody(FakeStream& stream, std::string_view data, bool end_stream);
  sluice_filter_status responseBody(FakeStream& stream, std::string_view data, bool end_stream);
  // Fires every armed timer of `stream` (in arming order), as the worker loop would; timers
  // armed by those callbacks wait for the next call. Returns how many fired.
  size_t fireTimers(FakeStream& stream);
  // Runs every post() queued so far (any harness), on this thread: with the live stream when
  // its ref is still open in a harness, else with NULL. Returns how many ran.
  static size_t runPosts();
  // The post() entry point of the fake host (thread-safe: tests may post from threads).
  static int post(sluice_stream_ref ref, sluice_post_fn fn, void* arg);
  // Worker 0's instance (for tests of per-worker state), and more workers for the same config.
  void* worker() const { return worker_; }
  void* config() const { return config_; }
  // The files config_create declared with depends_on_file (path, SHA-256).
  const std::vector<plugin::FileDependency>& files() const { return files_; }
  // on_log + stream_destroy. Also done by ~FakeStream for a stream still open, and by this
  // harness's destructor for streams that outlive it.
  void finish(FakeStream& stream);

 private:
  void open(FakeStream& stream);

  const sluice_filter_plugin* hooks_;
  sluice_host_api host_{};
  void* config_ = nullptr;
  std::vector<plugin::FileDependency> files_;
  void* worker_ = nullptr;
  std::vector<FakeStream*> open_;
  std::string error_;
  uint32_t error_line_ = 0;
  uint32_t error_column_ = 0;
  std::vector<std::string> logs_;
};

}  // namespace sluice::testing
