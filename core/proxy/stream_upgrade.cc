// The Stream's upgrades (RFC 9110 §7.8, §15.2.2; WebSocket: RFC 6455 §4): which offered
// protocols go upstream, the upstream's 101 back to the client, and the hand-over of both
// connections to a Tunnel.
#include "core/common/log.h"
#include "core/http/serialize.h"
#include "core/proxy/downstream.h"
#include "core/proxy/local_reply.h"
#include "core/proxy/stream.h"
#include "core/proxy/stream_internal.h"

namespace sluice::proxy {
namespace {

// True when the offered protocol `offer` ("websocket", "foo/2") is in `allowed` (lowercase
// names; an entry without a version allows every version of that name).
bool allowedProtocol(std::string_view offer, const std::vector<std::string>& allowed) {
  std::string_view name = offer.substr(0, offer.find('/'));
  for (const std::string& a : allowed) {
    bool versioned = a.find('/') != std::string::npos;
    if (http::equalsIgnoreCase(versioned ? offer : name, a)) return true;
  }
  return false;
}

}  // namespace

void Stream::prepareUpgrade() {
  upgrade_.clear();
  const http::HeaderMap& h = request_.headers;
  const std::vector<std::string>& allowed = chain_->info().config.upgrades;
  if (allowed.empty() || !h.has(http::HeaderId::kUpgrade)) return;
  // An upgrade is a bodiless HTTP/1.1 GET (RFC 6455 §4.1; RFC 9110 §7.8 has no Upgrade in
  // HTTP/1.0 through proxies) whose Connection names the "upgrade" option. Anything else is
  // served as plain HTTP with Upgrade stripped.
  const bool body =
      request_.framing == http::Framing::kChunked ||
      (request_.framing == http::Framing::kContentLength && request_.content_length > 0);
  if (request_.method != "GET" || request_.version_minor != 1 || body ||
      !h.hasToken("connection", "upgrade")) {
    return;
  }
  for (size_t i = 0; const std::string_view* v = h.get(http::HeaderId::kUpgrade, i); ++i) {
    http::forEachListElement(*v, [&](std::string_view offer) {
      if (!allowedProtocol(offer, allowed)) return;
      if (!upgrade_.empty()) upgrade_.append(", ");
      upgrade_.append(offer.data(), offer.size());
    });
  }
}

int Stream::onSwitchingProtocols(http::MessageHead& head) {
  // The upstream connection passes a 101 only for an upgrade request, naming its protocol.
  last_upstream_status_ = head.status;
  if (attempt_active_)
    info_.upstream_us = static_cast<int64_t>(internal::nowUs() - attempt_start_us_);
  endAttempt(SLUICE_OUTCOME_SUCCESS);
  response_.status = head.status;
  response_.reason.swap(head.reason);
  response_.headers.swap(head.headers);
  response_.version_minor = head.version_minor;
  response_.framing = http::Framing::kNone;
  std::string protocol;
  for (size_t i = 0; const std::string_view* v = response_.headers.get("upgrade", i); ++i) {
    protocol.append(protocol.empty() ? "" : ", ").append(*v);
  }
  http::stripHopByHop(response_.headers);
  response_.headers.add("Connection", "upgrade");
  response_.headers.add("Upgrade", protocol);
  upgrade_head_ = true;
  fm_.encodeHeaders(true, false);  // onEncodedHeaders writes it and switches
  if (!switching_ && !finished_ && !local_reply_) {
    // A filter paused the 101: the upstream already switched, so the tunnel cannot wait.
    SLUICE_LOG(kWarn, "a response filter paused a 101 response: 502");
    fm_.stop(FilterDir::kResponse);
    FilterReply reply;
    reply.status = 502;
    reply.content_type = "application/json";
    reply.body = errorBody(502, "a response filter paused the protocol switch");
    sendReply(std::move(reply), true, false);
  }
  return 0;
}

void Stream::writeSwitchingHead() {
  upgrade_head_ = false;
  response_started_ = true;
  switching_ = true;
  http::writeResponseHead(conn_.output(), response_.status, response_.reason, response_.headers,
                          http::Framing::kNone, 0, false, false);
}

void Stream::onUpstreamSwitched() {
  if (finished_ || !switching_ || upstream_ == nullptr) return;
  const bool upstream_ended = upstream_->inputEnded();
  std::unique_ptr<event::Transport> transport = upstream_->releaseTransport();
  dropUpstream();
  if (transport == nullptr) {
    conn_.abort();
    return;
  }
  finished_ = true;     // the HTTP exchange is over; the tunnel logs it when it ends
  releaseResilience();  // a tunnel holds no request slot of the cluster (max_requests, budget)
  chain_->info().stats->response(101);
  SLUICE_LOG(kDebug, request_.method, " ", original_target_, " from ", conn_.clientAddress(),
             ": switched to ",
             request_.headers.get("upgrade") ? *request_.headers.get("upgrade") : std::string("?"));
  // The tunnel keeps the settings of the listener snapshot this request started with.
  conn_.startTunnel(std::move(transport), upstream_ended,
                    chain_->info().config.tunnel_idle_timeout_ms);
}

void Stream::onTunnelEnd(const Tunnel::Result& result) {
  info_.bytes_in = result.bytes_from_downstream;
  info_.bytes_out = result.bytes_from_upstream;
  if (result.end == Tunnel::End::kDownstreamError) info_.setFlag(kClientReset);
  if (result.end == Tunnel::End::kUpstreamError) info_.setFlag(kUpstreamReset);
  finished_ = true;
  callOnLog();
}

}  // namespace sluice::proxy
