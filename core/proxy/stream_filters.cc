// The Stream's side of its filter chain: what the runner (FilterManager) hands back, and the
// request facts the filter host API reads (context, attributes, local replies with headers).
#include <array>
#include <cstring>
#include <tuple>
#include <utility>

#include "core/common/log.h"
#include "core/http/headers.h"
#include "core/proxy/access_log.h"
#include "core/proxy/downstream.h"
#include "core/proxy/stream.h"
#include "core/proxy/stream_internal.h"

namespace sluice::proxy {
namespace {

constexpr size_t kMaxContextKeys = 64;
constexpr size_t kMaxContextKey = 64;
constexpr size_t kMaxContextValue = 4096;

// Context key bytes: ASCII letters, digits, '_', '.', '-'.
constexpr std::array<bool, 256> makeContextKeyTable() {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  }
  return t;
}
constexpr std::array<bool, 256> kContextKeyByte = makeContextKeyTable();

// `key` is the literal `lit` (a compile-time length: the compare is a load or two, no call).
template <size_t N>
bool isLiteral(std::string_view key, const char (&lit)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

// The well-known keys (docs/writing-a-filter.md) that the auth filters set on every request they
// admit: valid keys (all bytes are key bytes), so validContextKey takes them as a whole.
bool knownContextKey(std::string_view key) {
  return isLiteral(key, "consumer") || isLiteral(key, "auth.method");
}

bool validContextKey(std::string_view key) {
  if (knownContextKey(key)) return true;
  if (key.empty() || key.size() > kMaxContextKey) return false;
  for (char c : key) {
    if (!kContextKeyByte[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

// Fields a filter's local reply may not set: the host frames the reply and owns the connection.
bool framingOrHopByHop(std::string_view name) {
  return http::isHopByHop(name) || http::equalsIgnoreCase(name, "content-length");
}

}  // namespace

// ---------------------------------------------------------------- FilterManagerCallbacks

void Stream::onEncodedHeaders() {
  if (local_reply_) {
    writeLocalReply();
  } else if (upgrade_head_) {
    writeSwitchingHead();
  } else {
    writeResponseHead();
  }
}

bool Stream::replyMustClose() const {
  // A reply before the request was read completely: the connection stays open when the rest
  // of the body is small enough to read and discard (its length is known), else it closes.
  if (request_complete_ || request_.framing == http::Framing::kNone) return false;
  // Expect: 100-continue and no 100 sent: the client may send the body or not (RFC 9110
  // §10.1.1), so what follows on the connection is ambiguous: reading it as body would eat
  // the client's next request, reading it as a request would parse the body. Close.
  if (expect_continue_ && !sent_continue_) return true;
  if (request_.framing != http::Framing::kContentLength) return true;  // chunked: unbounded
  const uint64_t left =
      request_.content_length > info_.bytes_in ? request_.content_length - info_.bytes_in : 0;
  return left > internal::kMaxDiscardBytes;
}

void Stream::onFilterReply(FilterReply reply, size_t filter, bool filtered) {
  if (filter != FilterManager::kNone && fm_.chain() != nullptr) {
    info_.local_reply_filter = fm_.chain()->name(filter);
  }
  sendReply(std::move(reply), replyMustClose(), filtered);
}

void Stream::onBodyReplaced(FilterDir dir, uint64_t len) {
  http::MessageHead& m = dir == FilterDir::kRequest ? request_ : response_;
  m.framing = http::Framing::kContentLength;  // chunked framing is dropped
  m.content_length = len;
  m.headers.remove("transfer-encoding");
  m.headers.set("Content-Length", std::to_string(len));
}

void Stream::onHolding(FilterDir dir, bool above) {
  if (dir == FilterDir::kRequest) {
    hold_request_ = above;
    if (above) {
      conn_.pauseReading();
    } else if (!request_paused_) {
      conn_.resumeReading();
    }
    return;
  }
  hold_response_ = above;
  if (upstream_ == nullptr) return;
  if (above) {
    upstream_->pauseReading();
  } else if (!response_paused_) {
    upstream_->resumeReading();
  }
}

// ---------------------------------------------------------------- host API backing

void Stream::filterLocalReply(uint32_t status, std::string_view content_type, std::string_view body,
                              const sluice_header_field* headers, size_t count) {
  if (status < 200 || status > 599) status = 500;
  FilterReply reply;
  reply.status = status;
  reply.content_type = std::string(content_type);
  reply.body = std::string(body);
  for (size_t i = 0; headers != nullptr && i < count; ++i) {
    std::string_view name(headers[i].name.data == nullptr ? "" : headers[i].name.data,
                          headers[i].name.len);
    std::string_view value(headers[i].value.data == nullptr ? "" : headers[i].value.data,
                           headers[i].value.len);
    if (!http::isToken(name) || !http::isFieldValue(value) || framingOrHopByHop(name)) {
      // A filter that does it once does it on every request: at most one line a second per
      // worker, with the count of the others.
      thread_local log::Throttle throttle;
      uint64_t skipped = 0;
      if (throttle.allow(internal::nowUs(), 1000000, &skipped)) {
        SLUICE_LOG(kWarn, "a filter's local reply header '", http::isToken(name) ? name : "?",
                   "' was dropped (invalid, framing or hop-by-hop field)",
                   skipped > 0
                       ? " (and " + std::to_string(skipped) + " more since the last such line)"
                       : "");
      }
      continue;
    }
    reply.headers.emplace_back(std::string(name), std::string(value));
  }
  if (!content_type.empty() && !http::isFieldValue(content_type)) reply.content_type.clear();
  fm_.localReply(std::move(reply));
}

sluice_stream_ref Stream::ref() {
  if (ref_ == 0) ref_ = ended_ ? runtime_.streams().unused() : runtime_.streams().add(this);
  return ref_;
}

int Stream::contextSet(std::string_view key, std::string_view value) {
  if (!validContextKey(key) || value.size() > kMaxContextValue) return -1;
  for (auto& [k, v] : context_) {
    if (k == key) {
      v.assign(value.data(), value.size());
      return 0;
    }
  }
  if (context_.size() >= kMaxContextKeys) return -1;
  // Both strings built in place from the views (no temporaries moved into the pair).
  context_.emplace_back(std::piecewise_construct, std::forward_as_tuple(key),
                        std::forward_as_tuple(value));
  return 0;
}

const std::string* Stream::contextGet(std::string_view key) const {
  for (const auto& [k, v] : context_) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string_view Stream::attribute(sluice_attribute attr) const {
  const tls::ConnectionInfo* tls = conn_.tlsInfo();
  auto present = [](std::string_view s) { return s.empty() ? std::string_view() : s; };
  switch (attr) {
    case SLUICE_ATTR_ROUTE_NAME:
      return routed_ ? present(route_name_) : std::string_view();
    case SLUICE_ATTR_CLUSTER_NAME:
      return routed_ ? present(route_result_.cluster) : std::string_view();
    case SLUICE_ATTR_LISTENER_NAME:
      return present(chain_->info().config.name);
    case SLUICE_ATTR_REQUEST_ID: {
      const std::string_view* id = request_.headers.get("x-request-id");
      return id == nullptr ? std::string_view() : std::string_view(*id);
    }
    case SLUICE_ATTR_TLS_SNI:
      return tls != nullptr ? present(tls->sni) : std::string_view();
    case SLUICE_ATTR_TLS_VERSION:
      return tls != nullptr ? present(tls->version) : std::string_view();
    case SLUICE_ATTR_TLS_PEER_SUBJECT:
      return tls != nullptr ? present(tls->peer_subject) : std::string_view();
    case SLUICE_ATTR_UPSTREAM_PATH:
      return routed_ ? present(upstream_path_) : std::string_view();
    case SLUICE_ATTR_PROTOCOL:
      return protocolName(request_.version_minor);
    default:
      return {};
  }
}

uint64_t Stream::startTimeUs(sluice_clock clock) const {
  return clock == SLUICE_CLOCK_REALTIME ? static_cast<uint64_t>(info_.start_unix_us)
                                        : info_.start_mono_us;
}

}  // namespace sluice::proxy
