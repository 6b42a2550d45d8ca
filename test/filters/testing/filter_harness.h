// Test helper: drives a filter plugin through its C hook table exactly as the core does —
// config_create (with the host's real config accessors over YAML text), worker_create,
// stream_create, hooks, on_log, stream_destroy — without dlopen. Single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/filter.h"
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
  // on_log + stream_destroy. Also done by ~FakeStream for a stream still open, and by this
  // harness's destructor for streams that outlive it.
  void finish(FakeStream& stream);

 private:
  void open(FakeStream& stream);

  const sluice_filter_plugin* hooks_;
  sluice_host_api host_{};
  void* config_ = nullptr;
  void* worker_ = nullptr;
  std::vector<FakeStream*> open_;
  std::string error_;
  uint32_t error_line_ = 0;
  uint32_t error_column_ = 0;
  std::vector<std::string> logs_;
};

}  // namespace sluice::testing
