// A listener's `access_log` entries.
#include "core/accesslog/format.h"
#include "core/config/parse.h"

namespace sluice::config::internal {
namespace {

constexpr uint64_t kMaxBufferBytes = 1ull << 30;

void parseAccessLog(const Field& field, Context& ctx, AccessLog* out) {
  if (field.value.IsNull()) ctx.error(field.mark, field.label + ": empty access_log entry");
  out->mark = field.mark;
  out->path_mark = field.mark;
  forEachField(field, "access_log entry", {"path", "format", "buffer_bytes"}, ctx,
               [&](const Field& f) {
                 if (f.key == "path") {
                   out->path_mark = f.mark;
                   std::string path;
                   if (!readString(f, ctx, &path)) return;
                   if (path.empty()) {
                     ctx.error(f.mark, cat(f.label, ": empty path (a file, or 'stderr')"));
                     return;
                   }
                   out->path = path == "stderr" ? path : resolvePath(ctx, path);
                 } else if (f.key == "format") {
                   std::string text;
                   if (!readString(f, ctx, &text)) return;
                   accesslog::Format format;
                   std::string error;
                   if (text.empty()) {
                     ctx.error(f.mark, cat(f.label, ": empty format ('json' or a format string)"));
                   } else if (!accesslog::Format::parse(text, &format, &error)) {
                     ctx.error(f.mark, cat(f.label, ": ", error));
                   } else {
                     out->format = std::move(text);
                   }
                 } else {
                   readUint64(f, 1, kMaxBufferBytes, ctx, &out->buffer_bytes);
                 }
               });
  if (!field.value.IsNull()) requireFields(field, {"path"}, ctx);
}

}  // namespace

void parseAccessLogs(const Field& field, Context& ctx, std::vector<AccessLog>* out) {
  auto one = [&](const Field& item) {
    AccessLog& log = out->emplace_back();
    parseAccessLog(item, ctx, &log);
    for (size_t i = 0; i + 1 < out->size(); ++i) {
      if (!log.path.empty() && (*out)[i].path == log.path) {
        ctx.error(log.path_mark, cat(item.label, ".path: '", log.path,
                                     "' is already this listener's access log (first at ",
                                     (*out)[i].path_mark.str(), ")"));
        break;
      }
    }
  };
  if (field.value.IsSequence()) {
    forEachItem(field, ctx, one);
  } else {
    one(field);
  }
}

}  // namespace sluice::config::internal
