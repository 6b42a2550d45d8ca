// Strict HTTP/1.x message parser over llhttp (built in LLHTTP_STRICT_MODE), adding the rules
// llhttp leaves to its user (DESIGN.md §6): Transfer-Encoding exactly "chunked", no TE in
// HTTP/1.0, obs-fold, empty field names, Host presence, version 1.0/1.1 only, and size limits.
// One parser per connection direction; it is reused for every message on the connection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/http/headers.h"
#include "llhttp.h"

namespace sluice::http {

// How the body of a message is delimited (RFC 9112 §6.3).
enum class Framing { kNone, kContentLength, kChunked, kUntilClose };

// The head of a request or response as parsed.
struct MessageHead {
  // Request only.
  std::string method;
  std::string target;  // request-target as sent
  // Response only.
  uint32_t status = 0;
  std::string reason;
  // Both.
  uint8_t version_minor = 1;  // HTTP/1.<minor>; only 1.0 and 1.1 are accepted
  HeaderMap headers;          // Transfer-Encoding removed (framing below says it)
  Framing framing = Framing::kNone;
  uint64_t content_length = 0;  // when framing == kContentLength
  // The connection persists after this message (RFC 9112 §9.3): false when any Connection
  // field lists `close` (any case, any version), for HTTP/1.0 unless one lists `keep-alive`, and
  // for a close-delimited response body.
  bool keep_alive = true;

  void clear();
};

// Limits enforced while parsing; 0 disables a limit.
struct ParserLimits {
  uint32_t max_target_bytes = 8192;   // request-target; over → 414
  uint32_t max_header_bytes = 65536;  // sum of names and values; over → 431
  uint32_t max_header_count = 100;    // over → 431
  uint64_t max_body_bytes = 0;        // over → 413
};

class ParserCallbacks {
 public:
  virtual ~ParserCallbacks() = default;
  // The head is complete and valid. Return 0 to parse a body per the framing, 1 to expect no
  // body (a response to HEAD, RFC 9110 §9.3.2), or -1 to fail with the status/reason set by
  // Parser::fail().
  virtual int onHead(MessageHead& head) = 0;
  // A piece of body (chunked framing already removed). Borrowed for the call.
  virtual void onBody(const char* data, size_t len) = 0;
  // The message ended. Return true to pause the parser right after it (pipelining: the caller
  // resumes it once the response is done).
  virtual bool onMessageComplete() = 0;
};

class Parser {
 public:
  enum class Type { kRequest, kResponse };
  enum class Result {
    kOk,      // every byte consumed
    kPaused,  // paused after a message; `consumed` says how far
    kError,   // malformed: errorStatus()/errorReason() say why; the connection must close
  };

  Parser(Type type, ParserCallbacks* callbacks, ParserLimits limits);
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // Feeds `len` bytes. `*consumed` receives the number of bytes used (all of them unless paused
  // or failed).
  Result execute(const char* data, size_t len, size_t* consumed);
  // Tells the parser the peer closed: completes a close-delimited body. kError when the close
  // cut a message short (e.g. inside a Content-Length body).
  Result finish();
  // Continues after kPaused.
  void resume();
  // Records why the message is refused; used from callbacks before returning an error.
  void fail(uint32_t status, std::string reason);
  // True between the first byte of a message and its end.
  bool inMessage() const { return in_message_; }
  // Bytes of body received in the current message.
  uint64_t bodyBytes() const { return body_bytes_; }

  uint32_t errorStatus() const { return error_status_; }
  // The error was a header section over max_header_bytes or max_header_count.
  bool headerLimitExceeded() const { return limit_exceeded_; }
  const std::string& errorReason() const { return error_reason_; }
  MessageHead& head() { return head_; }

 private:
  static int onMessageBegin(llhttp_t* p);
  static int onUrl(llhttp_t* p, const char* at, size_t len);
  static int onStatus(llhttp_t* p, const char* at, size_t len);
  static int onHeaderField(llhttp_t* p, const char* at, size_t len);
  static int onHeaderValue(llhttp_t* p, const char* at, size_t len);
  static int onHeaderValueComplete(llhttp_t* p);
  static int onHeadersComplete(llhttp_t* p);
  static int onBody(llhttp_t* p, const char* at, size_t len);
  static int onMessageComplete(llhttp_t* p);
  static const llhttp_settings_t& settings();

  // What the codec's checks need from the fields, gathered as each field completes.
  struct FieldFacts {
    size_t hosts = 0;
    size_t transfer_encodings = 0;
    bool content_length = false;
    // Whether some Connection field lists "close" or "keep-alive" is in the head's
    // headers.connectionOptions().
  };
  void noteField(HeaderId id);
  int checkHead(const FieldFacts& facts);
  int checkFraming(const FieldFacts& facts);
  bool addHeaderBytes(size_t len);
  // fail() with 400 (request) or 502 (response); returns -1.
  [[gnu::cold, gnu::noinline]] int failSyntax(const char* reason);
  // fail() with 431 (request) or 502 (response) for a header limit; returns -1.
  [[gnu::cold, gnu::noinline]] int failHeaderLimit(const char* request_reason,
                                                   const char* response_reason);

  llhttp_t parser_;
  Type type_;
  ParserCallbacks* callbacks_;
  ParserLimits limits_;
  MessageHead head_;
  bool in_message_ = false;
  bool limit_exceeded_ = false;
  bool upgrade_paused_ = false;   // paused by llhttp after an Upgrade/101 message
  bool pause_requested_ = false;  // onMessageComplete asked for the pause now in effect
  // Header accumulation state: a field or value may arrive in several pieces.
  enum class HeaderState { kNone, kField, kValue, kValueDone } header_state_ = HeaderState::kNone;
  // The name and the value being parsed: in the input buffer (ptr, len) while they come in one
  // piece each, the usual case; in the arena (offset, len) once they continue in another
  // buffer. A field of the buffer being parsed is added as a view of it; those fields (from
  // input_first_ on) are copied into the arena at once by flushFields(), at the end of each
  // execute() and when the head completes.
  struct Part {
    const char* ptr = nullptr;  // in the input, unless stored
    size_t offset = 0;          // in the arena, when stored
    size_t len = 0;
    bool stored = false;
  };
  Part name_;
  Part value_;
  static constexpr size_t kNoInputFields = ~size_t{0};
  size_t input_first_ = kNoInputFields;
  void flushFields() {
    if (input_first_ == kNoInputFields) return;
    head_.headers.copyInFields(input_first_);
    input_first_ = kNoInputFields;
  }
  // A piece continuing `part` that does not follow it in the input, or comes in a later buffer.
  [[gnu::noinline]] void continuePart(Part& part, const char* at, size_t len);
  // Copies `part` into the arena (the input it views is about to go).
  void storePart(Part& part);
  // At the end of execute(): the field in progress, if any, into the arena.
  void storePartialField();
  // onHeaderValueComplete for a field some of which is stored (see Part).
  [[gnu::noinline]] int addStoredField(bool has_value);
  FieldFacts facts_;
  size_t header_bytes_ = 0;
  uint64_t body_bytes_ = 0;
  const char* exec_begin_ = nullptr;  // start of the buffer being parsed (obs-fold check)
  char prev_last_byte_ = 0;           // last non-SP/HTAB byte of earlier buffers
  uint32_t error_status_ = 0;
  std::string error_reason_;
};

}  // namespace sluice::http
