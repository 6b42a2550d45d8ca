#include "core/accesslog/sink.h"

#include <string>

namespace sluice::accesslog {

Sink::Sink(Format format, std::shared_ptr<LogFile> file, size_t buffer_bytes)
    : format_(std::move(format)), file_(std::move(file)), buffer_bytes_(buffer_bytes) {}

bool Sink::log(uint32_t worker, const proxy::RequestInfo& info) const {
  thread_local std::string line;  // formatted here, outside any lock
  line.clear();
  format_.append(info, &line);
  return file_->append(worker, line, buffer_bytes_);
}

}  // namespace sluice::accesslog
