#include "test/fuzz/codec_harness.h"

#include <algorithm>
#include <string_view>

#include "test/fuzz/codec_checker.h"
#include "test/fuzz/fuzz_check.h"

namespace sluice::fuzz {
namespace {

using http::Parser;

CodecOptions decodeOptions(Parser::Type type, uint8_t b) {
  CodecOptions o;
  o.type = type;
  const bool small = (b & 1) != 0;
  o.limits.max_target_bytes = small ? 64 : 8192;
  o.limits.max_header_bytes = small ? 512 : 65536;
  o.limits.max_header_count = small ? 8 : 100;
  o.limits.max_body_bytes = (b & 2) == 0 ? 0 : (small ? 16 : 4096);
  o.pause = type == Parser::Type::kRequest || (b & 4) == 0;
  o.head_mask = static_cast<uint8_t>(b >> 3);
  return o;
}

// Sizes of the pieces handed to execute().
class Splitter {
 public:
  explicit Splitter(uint8_t b) : state_(b * 2654435761u + 1) {
    static constexpr size_t kMax[8] = {0, 1, 2, 3, 5, 8, 64, 512};
    max_ = kMax[b & 7];
  }
  size_t next(size_t left) {
    if (max_ == 0) return left;
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return std::min(left, 1 + state_ % max_);
  }

 private:
  uint32_t state_;
  size_t max_;
};

// Feeds one piece, resuming after each pause as the proxy does once a response is done.
Parser::Result feed(Parser& parser, CheckingCallbacks& cb, const CodecOptions& o,
                    std::string_view piece) {
  for (;;) {
    size_t consumed = SIZE_MAX;
    Parser::Result r = parser.execute(piece.data(), piece.size(), &consumed);
    SLUICE_FUZZ_CHECK(consumed <= piece.size(), "consumed more than given");
    size_t completed = cb.takeCompleted();
    if (r == Parser::Result::kError) return r;
    SLUICE_FUZZ_CHECK(!cb.bodilessPending(), "a message without a body did not end at its head");
    if (r == Parser::Result::kOk) {
      SLUICE_FUZZ_CHECK(consumed == piece.size(), "kOk without consuming everything");
      SLUICE_FUZZ_CHECK(!o.pause || completed == 0, "a message completed without pausing");
      return r;
    }
    SLUICE_FUZZ_CHECK(o.pause && completed == 1, "paused without exactly one message completing");
    SLUICE_FUZZ_CHECK(!parser.inMessage(), "paused inside a message");
    parser.resume();
    piece.remove_prefix(consumed);
    if (piece.empty()) return Parser::Result::kOk;
  }
}

bool allowedStatus(Parser::Type type, uint32_t status) {
  if (type == Parser::Type::kResponse) return status == 502;
  for (uint32_t s : {400, 408, 413, 414, 431, 501, 505}) {
    if (status == s) return true;
  }
  return false;
}

CodecTrace run(const CodecOptions& o, std::string_view stream, uint8_t split) {
  CheckingCallbacks cb(o, stream);
  Parser parser(o.type, &cb, o.limits);
  cb.attach(&parser);
  Splitter pieces(split);
  Parser::Result r = Parser::Result::kOk;
  for (size_t pos = 0; pos < stream.size() && r != Parser::Result::kError;) {
    size_t n = pieces.next(stream.size() - pos);
    r = feed(parser, cb, o, stream.substr(pos, n));
    pos += n;
  }
  if (r != Parser::Result::kError && o.type == Parser::Type::kResponse) {
    r = parser.finish();  // the upstream closed
    cb.takeCompleted();
    SLUICE_FUZZ_CHECK(r == Parser::Result::kError || !parser.inMessage(),
                      "finish() succeeded inside a message");
  }
  CodecTrace trace = std::move(cb.trace());
  if (r == Parser::Result::kError) {
    trace.error = true;
    trace.status = parser.errorStatus();
    SLUICE_FUZZ_CHECK(allowedStatus(o.type, trace.status), "unexpected error status");
    SLUICE_FUZZ_CHECK(!parser.errorReason().empty(), "error without a reason");
  }
  trace.in_message = parser.inMessage();
  return trace;
}

}  // namespace

void fuzzCodec(Parser::Type type, const uint8_t* data, size_t size) {
  if (size < 2) return;
  const CodecOptions options = decodeOptions(type, data[1]);
  std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);
  CodecTrace whole = run(options, stream, 0);
  if ((data[0] & 7) == 0) return;
  CodecTrace cut = run(options, stream, data[0]);
  // Where a stream is cut must not change what it means. (Which error wins may differ: a limit
  // can trip on a piece before a syntax error later in the same piece is seen.)
  SLUICE_FUZZ_CHECK(whole.error == cut.error, "success or failure depends on the cuts");
  SLUICE_FUZZ_CHECK(whole.heads == cut.heads, "heads delivered depend on the cuts");
  SLUICE_FUZZ_CHECK(whole.messages == cut.messages, "messages depend on the cuts");
  SLUICE_FUZZ_CHECK(whole.error || whole.in_message == cut.in_message,
                    "end state depends on the cuts");
}

}  // namespace sluice::fuzz
