#include "test/fuzz/codec_checker.h"

#include "core/http/headers.h"
#include "test/fuzz/fuzz_check.h"
#include "test/fuzz/known_bugs.h"

namespace sluice::fuzz {
namespace {

using http::Framing;
using http::MessageHead;

// Decimal digits only, no overflow: what a Content-Length that passed the codec looks like.
bool parseDecimal(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (v > (UINT64_MAX - static_cast<uint64_t>(c - '0')) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return needle.empty() || haystack.find(needle) != std::string_view::npos;
}

}  // namespace

void CheckingCallbacks::checkStartLine(const MessageHead& head) const {
  SLUICE_FUZZ_CHECK(head.version_minor <= 1, "only HTTP/1.0 and 1.1 are accepted");
  if (request()) {
    SLUICE_FUZZ_CHECK(!head.method.empty(), "request head without a method");
    SLUICE_FUZZ_CHECK(!head.target.empty(), "request head without a target");
    uint32_t max_target = options_.limits.max_target_bytes;
    SLUICE_FUZZ_CHECK(max_target == 0 || head.target.size() <= max_target, "target over limit");
    size_t hosts = head.headers.count("host");
    SLUICE_FUZZ_CHECK(hosts <= 1, "more than one Host accepted");
    SLUICE_FUZZ_CHECK(hosts == 1 || head.version_minor == 0, "HTTP/1.1 request without Host");
  } else {
    SLUICE_FUZZ_CHECK(head.status >= 100 && head.status <= 599, "status out of range");
  }
}

void CheckingCallbacks::checkFields(const MessageHead& head) const {
  const http::ParserLimits& limits = options_.limits;
  SLUICE_FUZZ_CHECK(limits.max_header_count == 0 || head.headers.size() <= limits.max_header_count,
                    "more fields than max_header_count");
  size_t bytes = 0;
  for (const http::HeaderField& f : head.headers.fields()) {
    SLUICE_FUZZ_CHECK(http::isToken(f.name), "header name is not a token");
    SLUICE_FUZZ_CHECK(http::isFieldValue(f.value), "header value is not a field-value");
    SLUICE_FUZZ_CHECK(contains(input_, f.name), "header name not contiguous in the input");
    SLUICE_FUZZ_CHECK(contains(input_, f.value), "header value not contiguous (obs-fold?)");
    bytes += f.name.size() + f.value.size();
  }
  SLUICE_FUZZ_CHECK(limits.max_header_bytes == 0 || bytes <= limits.max_header_bytes,
                    "header bytes over max_header_bytes");
  SLUICE_FUZZ_CHECK(head.headers.count("transfer-encoding") == 0,
                    "Transfer-Encoding left in the head");
}

void CheckingCallbacks::checkFraming(const MessageHead& head) const {
  size_t cl = head.headers.count("content-length");
  switch (head.framing) {
    case Framing::kChunked:
      SLUICE_FUZZ_CHECK(cl == 0, "chunked framing and a Content-Length");
      SLUICE_FUZZ_CHECK(head.version_minor == 1, "chunked framing in HTTP/1.0");
      break;
    case Framing::kContentLength: {
      SLUICE_FUZZ_CHECK(cl == 1, "Content-Length framing without exactly one Content-Length");
      uint64_t value = 0;
      SLUICE_FUZZ_CHECK(parseDecimal(*head.headers.get("content-length"), &value),
                        "Content-Length framing with a malformed Content-Length");
      SLUICE_FUZZ_CHECK(value == head.content_length, "content_length differs from the field");
      uint64_t max_body = options_.limits.max_body_bytes;
      SLUICE_FUZZ_CHECK(!request() || max_body == 0 || value <= max_body,
                        "Content-Length over max_body_bytes accepted");
      break;
    }
    case Framing::kNone:
      SLUICE_FUZZ_CHECK(!request() || cl == 0, "request with Content-Length but no body");
      break;
    case Framing::kUntilClose:
      SLUICE_FUZZ_CHECK(!request(), "close-delimited request body");
      SLUICE_FUZZ_CHECK(cl == 0, "close-delimited body with a Content-Length");
      break;
  }
  // Persistence (RFC 9112 §9.3): "close" always ends the connection; HTTP/1.0 persists only
  // when asked for; a close-delimited body ends it by definition.
  SLUICE_FUZZ_CHECK(!head.keep_alive || !head.headers.hasToken("connection", "close"),
                    "keep-alive despite Connection: close");
  SLUICE_FUZZ_CHECK(!head.keep_alive || head.version_minor == 1 ||
                        head.headers.hasToken("connection", "keep-alive"),
                    "HTTP/1.0 keep-alive without Connection: keep-alive");
  SLUICE_FUZZ_CHECK(!head.keep_alive || head.framing != Framing::kUntilClose,
                    "keep-alive with a close-delimited body");
  if (!request() && (head.status < 200 || head.status == 204 || head.status == 304)) {
    SLUICE_FUZZ_CHECK(head.framing == Framing::kNone, "1xx/204/304 response with a body");
  }
}

int CheckingCallbacks::onHead(MessageHead& head) {
  SLUICE_FUZZ_CHECK(!in_body_, "a head before the previous message completed");
  SLUICE_FUZZ_CHECK(parser_->inMessage(), "a head outside a message");
  checkStartLine(head);
  checkFields(head);
  checkFraming(head);
  const size_t index = trace_.heads++;
  const bool head_request = !request() && index < 8 && (options_.head_mask >> index) & 1;
  in_body_ = true;
  framing_ = head_request ? Framing::kNone : head.framing;
  content_length_ = head.content_length;
  body_ = 0;
  current_ = head.method + " " + head.target + " " + std::to_string(head.status) + " " +
             head.reason + " 1." + std::to_string(head.version_minor) + " f" +
             std::to_string(static_cast<int>(framing_)) + " cl" + std::to_string(content_length_) +
             (head.keep_alive ? " ka\n" : " close\n");
  for (const http::HeaderField& f : head.headers.fields())
    current_.append(f.name).append(":").append(f.value).append("\n");
  current_ += "\n";
  return head_request ? 1 : 0;
}

void CheckingCallbacks::onBody(const char* data, size_t len) {
  SLUICE_FUZZ_CHECK(in_body_, "body outside a message");
  SLUICE_FUZZ_CHECK(framing_ != Framing::kNone, "body in a message framed without one");
  body_ += len;
  SLUICE_FUZZ_CHECK(framing_ != Framing::kContentLength || body_ <= content_length_,
                    "more body than Content-Length");
  uint64_t max_body = options_.limits.max_body_bytes;
  SLUICE_FUZZ_CHECK(!request() || max_body == 0 || body_ <= max_body,
                    "request body over max_body_bytes delivered");
  SLUICE_FUZZ_CHECK(parser_->bodyBytes() == body_, "bodyBytes() differs from bytes delivered");
  current_.append(data, len);
}

bool CheckingCallbacks::onMessageComplete() {
  SLUICE_FUZZ_CHECK(in_body_, "message complete without a head");
  SLUICE_FUZZ_CHECK(!parser_->inMessage(), "inMessage() at message complete");
  SLUICE_FUZZ_CHECK(framing_ != Framing::kContentLength || body_ == content_length_,
                    "Content-Length message complete with a short body");
  SLUICE_FUZZ_CHECK(framing_ != Framing::kNone || body_ == 0, "bodiless message with a body");
  in_body_ = false;
  ++completed_;
  trace_.messages.push_back(std::move(current_));
  current_.clear();
  return options_.pause;
}

bool CheckingCallbacks::bodilessPending() const { return in_body_ && framing_ == Framing::kNone; }

size_t CheckingCallbacks::takeCompleted() {
  size_t n = completed_;
  completed_ = 0;
  return n;
}

}  // namespace sluice::fuzz
