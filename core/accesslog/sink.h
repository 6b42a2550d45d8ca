// One `access_log` entry of a listener, built with the config: a format, the file it writes to
// and the per-worker buffer bound. Immutable, shared by the workers through the listener's
// ListenerInfo; a reload that changes the entry builds a new Sink (the file stays open when the
// new config still names it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/accesslog/format.h"
#include "core/accesslog/log_file.h"
#include "core/proxy/request_info.h"

namespace sluice::accesslog {

class Sink {
 public:
  // `buffer_bytes`: the most bytes of lines one worker keeps for this file while the writer
  // has not written them; past it, lines are dropped and counted.
  Sink(Format format, std::shared_ptr<LogFile> file, size_t buffer_bytes);

  // Formats one line for `info` and hands it to the writer thread. Worker thread `worker`.
  // Never blocks on I/O; allocates nothing once the worker's scratch buffer has grown to the
  // longest line. Returns false when the line was dropped (buffer full).
  bool log(uint32_t worker, const proxy::RequestInfo& info) const;

  const LogFile& file() const { return *file_; }

 private:
  Format format_;
  std::shared_ptr<LogFile> file_;
  size_t buffer_bytes_;
};

}  // namespace sluice::accesslog
