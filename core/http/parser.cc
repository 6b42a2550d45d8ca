#include "core/http/parser.h"

#include <utility>

#include "core/http/llhttp_dispatch.h"

namespace sluice::http {
namespace {

Parser* self(llhttp_t* p) { return static_cast<Parser*>(p->data); }

inline bool isOws(char c) { return c == ' ' || c == '\t'; }

}  // namespace

void MessageHead::clear() {
  method.clear();
  target.clear();
  status = 0;
  reason.clear();
  version_minor = 1;
  headers.clear();
  framing = Framing::kNone;
  content_length = 0;
  keep_alive = true;
}

const llhttp_settings_t& Parser::settings() {
  static const llhttp_settings_t kSettings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = &Parser::onMessageBegin;
    s.on_url = &Parser::onUrl;
    s.on_status = &Parser::onStatus;
    s.on_header_field = &Parser::onHeaderField;
    s.on_header_value = &Parser::onHeaderValue;
    s.on_header_value_complete = &Parser::onHeaderValueComplete;
    s.on_headers_complete = &Parser::onHeadersComplete;
    s.on_body = &Parser::onBody;
    s.on_message_complete = &Parser::onMessageComplete;
    return s;
  }();
  return kSettings;
}

Parser::Parser(Type type, ParserCallbacks* callbacks, ParserLimits limits)
    : type_(type), callbacks_(callbacks), limits_(limits) {
  llhttp_init(&parser_, type == Type::kRequest ? HTTP_REQUEST : HTTP_RESPONSE, &settings());
  parser_.data = this;
}

void Parser::fail(uint32_t status, std::string reason) {
  if (error_status_ != 0) return;  // keep the first cause
  error_status_ = status;
  error_reason_ = std::move(reason);
}

Parser::Result Parser::execute(const char* data, size_t len, size_t* consumed) {
  size_t done = 0;
  for (;;) {
    pause_requested_ = false;
    exec_begin_ = data + done;
    llhttp_errno_t err = llhttpExecute(&parser_, data + done, len - done);
    // The input is only borrowed for the call: what the head holds of it goes into its arena.
    flushFields();
    storePartialField();
    const char* pos = err == HPE_OK ? data + len : llhttp_get_error_pos(&parser_);
    if (pos == nullptr || pos < data + done) pos = data + done;
    for (const char* c = pos; c-- > data + done;) {
      if (*c != ' ' && *c != '\t') {
        prev_last_byte_ = *c;
        break;
      }
    }
    done = static_cast<size_t>(pos - data);
    *consumed = done;
    if (err == HPE_OK) return Result::kOk;
    if (err == HPE_PAUSED) return Result::kPaused;
    if (err == HPE_PAUSED_UPGRADE) {
      // A message with Upgrade (request, or a 101 response) ended. Callers that pause after
      // each message decide: the bytes after it stay unparsed until resume(), which goes on
      // with HTTP/1.1 (the upgrade was declined); a switch to a tunnel never resumes. Without
      // a pause requested, HTTP/1.1 carries on at once.
      if (pause_requested_) {
        upgrade_paused_ = true;  // resume() continues after the upgrade pause
        return Result::kPaused;
      }
      llhttp_resume_after_upgrade(&parser_);
      continue;
    }
    fail(type_ == Type::kRequest ? 400 : 502, llhttp_get_error_reason(&parser_));
    return Result::kError;
  }
}

Parser::Result Parser::finish() {
  llhttp_errno_t err = llhttp_finish(&parser_);
  if (err == HPE_OK || err == HPE_PAUSED) return Result::kOk;
  fail(type_ == Type::kRequest ? 400 : 502, "connection closed inside a message");
  return Result::kError;
}

void Parser::resume() {
  if (upgrade_paused_) {
    upgrade_paused_ = false;
    llhttp_resume_after_upgrade(&parser_);
  } else {
    llhttp_resume(&parser_);
  }
}

int Parser::onMessageBegin(llhttp_t* p) {
  Parser* s = self(p);
  s->input_first_ = kNoInputFields;  // (flushed when the previous head completed)
  s->head_.clear();
  // Room for the fields up front instead of the vector's regrowth per header; a spare vector
  // of this thread when there is one (the head is handed over to its stream, so capacity does
  // not carry over from the previous message).
  s->head_.headers.reserve();
  s->in_message_ = true;
  s->header_state_ = HeaderState::kNone;
  s->facts_ = FieldFacts();
  s->header_bytes_ = 0;
  s->body_bytes_ = 0;
  return 0;
}

int Parser::onUrl(llhttp_t* p, const char* at, size_t len) {
  Parser* s = self(p);
  s->head_.target.append(at, len);
  if (s->limits_.max_target_bytes != 0 && s->head_.target.size() > s->limits_.max_target_bytes) {
    s->fail(414, "request-target longer than max_request_line_bytes");
    return -1;
  }
  return 0;
}

int Parser::onStatus(llhttp_t* p, const char* at, size_t len) {
  Parser* s = self(p);
  s->head_.reason.append(at, len);
  return s->addHeaderBytes(len) ? 0 : -1;
}

bool Parser::addHeaderBytes(size_t len) {
  header_bytes_ += len;
  if (limits_.max_header_bytes != 0 && header_bytes_ > limits_.max_header_bytes) {
    failHeaderLimit("header section larger than limits.max_header_bytes",
                    "header section larger than max_response_header_bytes");
    return false;
  }
  return true;
}

// The failures are out of line (and cold): the callbacks' hot paths stay small.
int Parser::failSyntax(const char* reason) {
  fail(type_ == Type::kRequest ? 400 : 502, reason);
  return -1;
}

int Parser::failHeaderLimit(const char* request_reason, const char* response_reason) {
  limit_exceeded_ = true;
  fail(type_ == Type::kRequest ? 431 : 502,
       type_ == Type::kRequest ? request_reason : response_reason);
  return -1;
}

// What the codec's checks need from the fields, gathered as each one completes.
inline void Parser::noteField(HeaderId id) {
  switch (id) {
    case HeaderId::kHost:
      ++facts_.hosts;
      break;
    case HeaderId::kTransferEncoding:
      ++facts_.transfer_encodings;
      break;
    case HeaderId::kContentLength:
      facts_.content_length = true;
      break;
    default:
      break;
  }
}

void Parser::storePart(Part& part) {
  if (part.stored) return;
  flushFields();  // the arena's bytes stay in field order
  part.offset = head_.headers.bytesUsed();
  head_.headers.appendBytes(part.ptr, part.len);
  part.stored = true;
}

void Parser::continuePart(Part& part, const char* at, size_t len) {
  storePart(part);                     // (after the name, when this is the value)
  head_.headers.appendBytes(at, len);  // right after the part: nothing else was added since
  part.len += len;
}

void Parser::storePartialField() {
  if (header_state_ == HeaderState::kField) {
    storePart(name_);
  } else if (header_state_ == HeaderState::kValue) {
    storePart(name_);
    storePart(value_);
  }
}

// A field's name and then its value are noted where llhttp hands them over (the input, or the
// arena when they span buffers); the field is added when its value completes.
int Parser::onHeaderField(llhttp_t* p, const char* at, size_t len) {
  Parser* s = self(p);
  if (!s->addHeaderBytes(len)) return -1;
  if (s->header_state_ != HeaderState::kField) {
    if (s->limits_.max_header_count != 0 &&
        s->head_.headers.size() >= s->limits_.max_header_count) {
      return s->failHeaderLimit("more header fields than limits.max_header_count",
                                "more header fields than max_response_header_count");
    }
    s->name_.ptr = at;
    s->name_.len = len;
    s->name_.stored = false;
    s->header_state_ = HeaderState::kField;
  } else if (!s->name_.stored && s->name_.ptr + s->name_.len == at) {
    s->name_.len += len;
  } else {
    s->continuePart(s->name_, at, len);
  }
  return 0;
}

int Parser::onHeaderValue(llhttp_t* p, const char* at, size_t len) {
  Parser* s = self(p);
  if (len == 0) return 0;  // an empty value (RFC 9110 §5.5 allows it) may come as an empty span
  if (s->header_state_ == HeaderState::kValueDone || s->header_state_ == HeaderState::kNone) {
    // A value continuing after the field ended is an obsolete line folding (RFC 9112 §5.2).
    return s->failSyntax("obsolete line folding (obs-fold)");
  }
  // llhttp hands a folded continuation line to this callback as more value; it is the only
  // way a value piece can follow a line feed directly (RFC 9112 §5.2: obs-fold is refused).
  const char* b = at;
  while (b > s->exec_begin_ && (b[-1] == ' ' || b[-1] == '\t')) --b;
  char before = b > s->exec_begin_ ? b[-1] : s->prev_last_byte_;
  if (before == '\n') return s->failSyntax("obsolete line folding (obs-fold)");
  if (!s->addHeaderBytes(len)) return -1;
  if (s->header_state_ == HeaderState::kField) {
    s->value_.ptr = at;
    s->value_.len = len;
    s->value_.stored = false;
    s->header_state_ = HeaderState::kValue;
  } else if (!s->value_.stored && s->value_.ptr + s->value_.len == at) {
    s->value_.len += len;
  } else {
    s->continuePart(s->value_, at, len);
  }
  return 0;
}

int Parser::onHeaderValueComplete(llhttp_t* p) {
  Parser* s = self(p);
  if (s->header_state_ != HeaderState::kField && s->header_state_ != HeaderState::kValue) {
    return s->failSyntax("empty header field name");
  }
  // llhttp (strict) has checked tchar names and field-value characters (no CTLs but HTAB,
  // no DEL); the one thing it lets through is an empty name.
  if (s->name_.len == 0) return s->failSyntax("empty header field name");
  const bool has_value = s->header_state_ == HeaderState::kValue;
  s->header_state_ = HeaderState::kValueDone;
  if (s->name_.stored || (has_value && s->value_.stored)) return s->addStoredField(has_value);
  // The usual field: name and value in the input, added as views of it (flushFields copies).
  const std::string_view name(s->name_.ptr, s->name_.len);
  std::string_view value = has_value ? std::string_view(s->value_.ptr, s->value_.len)
                                     : std::string_view(s->name_.ptr + s->name_.len, 0);
  while (!value.empty() && isOws(value.front())) value.remove_prefix(1);
  while (!value.empty() && isOws(value.back())) value.remove_suffix(1);
  const HeaderId id = headerId(name);
  HeaderMap& headers = s->head_.headers;
  if (s->input_first_ == kNoInputFields) s->input_first_ = headers.size();
  headers.addStored(id, name, value);
  s->noteField(id);
  return 0;
}

int Parser::addStoredField(bool has_value) {
  // The field began in an earlier buffer: all of it into the arena (no input fields since).
  storePart(name_);
  std::string_view value;
  if (has_value) {
    storePart(value_);
    value = head_.headers.storedBytes(value_.offset, value_.len);
  }
  while (!value.empty() && isOws(value.front())) value.remove_prefix(1);
  while (!value.empty() && isOws(value.back())) value.remove_suffix(1);
  const std::string_view name = head_.headers.storedBytes(name_.offset, name_.len);
  const HeaderId id = headerId(name);
  head_.headers.addStored(id, name, value);
  noteField(id);
  return 0;
}

int Parser::checkHead(const FieldFacts& facts) {
  const bool request = type_ == Type::kRequest;
  if (header_state_ == HeaderState::kField) {
    fail(request ? 400 : 502, "header field without a value");
    return -1;
  }
  if (parser_.http_major != 1 || parser_.http_minor > 1) {
    fail(request ? 505 : 502, "only HTTP/1.0 and HTTP/1.1 are supported");
    return -1;
  }
  head_.version_minor = parser_.http_minor;
  // Persistence (RFC 9112 §9.3), decided here over the parsed fields rather than left to
  // llhttp: its HTTP/1.0 rule only looks for a keep-alive token, so "Connection: keep-alive"
  // plus "Connection: close" (two fields or one list) would persist. A close token in any
  // Connection field, in any case, wins for both versions; 1.0 persists only when asked for.
  // llhttp's answer still counts for what it alone knows (a close-delimited response body).
  const uint64_t options = head_.headers.connectionOptions();
  const bool close = (options & HeaderMap::idBit(HeaderId::kClose)) != 0;
  const bool asked =
      parser_.http_minor == 1 || (options & HeaderMap::idBit(HeaderId::kKeepAlive)) != 0;
  head_.keep_alive = !close && asked && llhttp_should_keep_alive(&parser_) != 0;
  if (!request) {
    head_.status = parser_.status_code;
    return 0;
  }
  head_.method = llhttp_method_name(static_cast<llhttp_method_t>(parser_.method));
  if (parser_.method == HTTP_CONNECT) {
    // sluice is not a forward proxy; and llhttp ends a CONNECT message at its head, so any
    // body it announced would be read as the next request (a smuggling shape). Refuse it here.
    fail(501, "CONNECT is not supported");
    return -1;
  }
  if (facts.hosts > 1) {
    fail(400, "more than one Host header");
    return -1;
  }
  if (facts.hosts == 0 && head_.version_minor == 1) {
    fail(400, "missing Host header in an HTTP/1.1 request");
    return -1;
  }
  return 0;
}

int Parser::checkFraming(const FieldFacts& facts) {
  const bool request = type_ == Type::kRequest;
  const uint32_t bad = request ? 400 : 502;
  if (facts.transfer_encodings > 0) {
    if (head_.version_minor == 0) {
      fail(bad, "Transfer-Encoding in an HTTP/1.0 message");
      return -1;
    }
    if (facts.transfer_encodings != 1 ||
        !equalsIgnoreCase(*head_.headers.get(HeaderId::kTransferEncoding), "chunked")) {
      fail(bad, "Transfer-Encoding other than exactly \"chunked\"");
      return -1;
    }
    head_.headers.remove(HeaderId::kTransferEncoding);
    head_.framing = Framing::kChunked;
    return 0;
  }
  if (facts.content_length) {  // llhttp has checked digits-only and unique
    head_.framing = Framing::kContentLength;
    head_.content_length = parser_.content_length;
    if (request && limits_.max_body_bytes != 0 && head_.content_length > limits_.max_body_bytes) {
      fail(413, "Content-Length larger than max_request_body_bytes");
      return -1;
    }
    return 0;
  }
  if (request) {
    head_.framing = Framing::kNone;
  } else {
    uint32_t st = head_.status;
    head_.framing = (st < 200 || st == 204 || st == 304) ? Framing::kNone : Framing::kUntilClose;
  }
  return 0;
}

int Parser::onHeadersComplete(llhttp_t* p) {
  Parser* s = self(p);
  s->flushFields();  // every field into the arena before the head is read
  const FieldFacts& facts = s->facts_;
  if (s->checkHead(facts) != 0 || s->checkFraming(facts) != 0) return -1;
  if (s->type_ == Type::kResponse) {
    uint32_t st = s->head_.status;
    if (st < 100 || st > 599) {
      s->fail(502, "status code out of range");
      return -1;
    }
    if (st < 200 || st == 204 || st == 304) s->head_.framing = Framing::kNone;
  }
  int r = s->callbacks_->onHead(s->head_);
  if (r < 0) {
    s->fail(s->type_ == Type::kRequest ? 500 : 502, "refused at headers");
    return -1;
  }
  if (r == 1) s->head_.framing = Framing::kNone;
  // 1xx, 204 and 304 responses never have a body, whatever Content-Length says
  // (RFC 9112 §6.3): tell llhttp so it does not wait for one.
  if (s->type_ == Type::kResponse && s->head_.framing == Framing::kNone) return 1;
  return r;
}

int Parser::onBody(llhttp_t* p, const char* at, size_t len) {
  Parser* s = self(p);
  s->body_bytes_ += len;
  if (s->type_ == Type::kRequest && s->limits_.max_body_bytes != 0 &&
      s->body_bytes_ > s->limits_.max_body_bytes) {
    s->fail(413, "request body larger than max_request_body_bytes");
    return -1;
  }
  s->callbacks_->onBody(at, len);
  return 0;
}

int Parser::onMessageComplete(llhttp_t* p) {
  Parser* s = self(p);
  s->in_message_ = false;
  if (!s->callbacks_->onMessageComplete()) return 0;
  s->pause_requested_ = true;
  return HPE_PAUSED;
}

}  // namespace sluice::http
