// ParserCallbacks that check, at every callback, what the strict codec promises (DESIGN.md §6),
// and record what a run produced so two runs over the same bytes can be compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/http/parser.h"

namespace sluice::fuzz {

// How one parser is driven.
struct CodecOptions {
  http::Parser::Type type = http::Parser::Type::kRequest;
  http::ParserLimits limits;
  bool pause = true;      // pause after each message, then resume (as downstream connections do)
  uint8_t head_mask = 0;  // response: bit i set → message i answers a HEAD (onHead returns 1)
};

// What one run delivered.
struct CodecTrace {
  std::vector<std::string> messages;  // each completed message: its head and body, serialised
  size_t heads = 0;                   // heads delivered
  bool error = false;
  uint32_t status = 0;  // errorStatus() after kError
  bool in_message = false;
};

class CheckingCallbacks : public http::ParserCallbacks {
 public:
  // `input` is the whole byte stream of the run: every header name and value must be a contiguous
  // piece of it (a value glued from two lines would be an obs-fold that slipped through).
  CheckingCallbacks(const CodecOptions& options, std::string_view input)
      : options_(options), input_(input) {}
  void attach(http::Parser* parser) { parser_ = parser; }

  int onHead(http::MessageHead& head) override;
  void onBody(const char* data, size_t len) override;
  bool onMessageComplete() override;

  // Messages completed since the last call.
  size_t takeCompleted();
  // A head framed without a body was delivered and its message has not completed: llhttp must
  // complete such a message as soon as its head is parsed.
  bool bodilessPending() const;
  CodecTrace& trace() { return trace_; }

 private:
  bool request() const { return options_.type == http::Parser::Type::kRequest; }
  void checkStartLine(const http::MessageHead& head) const;
  void checkFields(const http::MessageHead& head) const;
  void checkFraming(const http::MessageHead& head) const;

  const CodecOptions& options_;
  std::string_view input_;
  http::Parser* parser_ = nullptr;
  bool in_body_ = false;  // between onHead and onMessageComplete
  size_t completed_ = 0;
  http::Framing framing_ = http::Framing::kNone;  // effective framing of the current message
  uint64_t content_length_ = 0;
  uint64_t body_ = 0;    // body bytes delivered in the current message
  std::string current_;  // the current message, serialised
  CodecTrace trace_;
};

}  // namespace sluice::fuzz
